import './monitoring.css';
import { useEffect, useState } from 'preact/hooks';
import { fetchAll } from '../../api.ts';
import { DataTable } from '../../components/data-table.tsx';
import { localDateTime } from '../../components/date-time.ts';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { useFetch } from '../../components/use-fetch.ts';
import { to } from '../../paths.ts';
import type { Summary, TopLinks } from '../analytics/analytics-types.ts';
import type { Link } from '../links/link-types.ts';
import { formatMoney } from '../partner/money.ts';
import type { Conversion } from './monitoring.types.ts';

const TYPES = { order: 'Order', signup: 'Sign-up', custom: 'Custom goal' } as const;

function revenueText(revenue: Record<string, number>): string {
  const parts = Object.entries(revenue).map(([currency, minor]) => formatMoney(minor, currency));
  return parts.length ? parts.join(' + ') : 'None';
}

/** Conversions reported for the workspace's clicks: revenue over 30 days, per link, and every conversion. */
export default function ConversionsScreen() {
  const initial = new URLSearchParams(location.search);
  const [linkId, setLinkId] = useState(initial.get('link_id') ?? '');
  const [type, setType] = useState('');
  const [links, setLinks] = useState<Link[]>([]);
  useEffect(() => {
    fetchAll<Link>('/v1/links', {}, 3).then(setLinks, () => setLinks([]));
  }, []);
  const scope = { interval: '30d', link_id: linkId || undefined };
  const summary = useFetch<Summary>('/v1/analytics/summary', scope);
  const top = useFetch<TopLinks>(linkId ? null : '/v1/analytics/links/top', { interval: '30d', limit: 50 });
  const list = useCursorList<Conversion>('/v1/conversions', { link_id: linkId || undefined, type: type || undefined });
  const earning = (top.data?.data ?? []).filter((l) => l.conversions > 0);

  return (
    <Page title="Conversions">
      <p>Orders, sign-ups and goals your site reported for visitors who came through a short link (POST /v1/conversions with the click id).</p>
      <div class="grid">
        <Field label="Link">
          {(control) => (
            <select {...control} value={linkId} onChange={(e) => setLinkId(e.currentTarget.value)}>
              <option value="">All links</option>
              {links.map((l) => (
                <option key={l.id} value={l.id}>
                  {l.short_url.replace(/^https?:\/\//, '')}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Type">
          {(control) => (
            <select {...control} value={type} onChange={(e) => setType(e.currentTarget.value)}>
              <option value="">Every type</option>
              {Object.entries(TYPES).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <section aria-labelledby="conv-totals">
        <h2 id="conv-totals">Last 30 days{linkId ? ', this link' : ''}</h2>
        <ErrorBanner error={summary.error} title="The totals could not be loaded" />
        {summary.data && (
          <dl class="facts">
            <dt>Conversions</dt>
            <dd>{summary.data.conversions.toLocaleString()}</dd>
            <dt>Revenue</dt>
            <dd>{revenueText(summary.data.revenue)}</dd>
            <dt>Clicks</dt>
            <dd>{summary.data.clicks.toLocaleString()}</dd>
          </dl>
        )}
      </section>
      {!linkId && earning.length > 0 && (
        <DataTable
          caption="Revenue per link, last 30 days"
          columns={[
            { label: 'Link', render: (l) => (l.short_url ? <a href={`${to('/conversions')}?link_id=${l.id}`} onClick={(e) => (e.preventDefault(), setLinkId(l.id))}>{l.short_url.replace(/^https?:\/\//, '')}</a> : l.id) },
            { label: 'Clicks', render: (l) => l.clicks.toLocaleString(), numeric: true },
            { label: 'Conversions', render: (l) => l.conversions.toLocaleString(), numeric: true },
            { label: 'Revenue', render: (l) => revenueText(l.revenue), numeric: true },
          ]}
          rows={earning}
          rowKey={(l) => l.id}
        />
      )}
      <section aria-labelledby="conv-list">
        <h2 id="conv-list">Every conversion</h2>
        <ErrorBanner error={list.error} title="The conversions could not be loaded" />
        {list.loading && list.items.length === 0 && <p aria-busy="true">Loading…</p>}
        {!list.loading && !list.error && list.items.length === 0 && (
          <EmptyState title="No conversions yet">Turn on conversion tracking in the workspace settings, then report conversions from your site with the lp_click_id it receives.</EmptyState>
        )}
        {list.items.length > 0 && (
          <DataTable
            caption="Conversion list"
            hideCaption
            columns={[
              { label: 'When', render: (c) => localDateTime(c.occurred_at) },
              { label: 'Link', render: (c) => <a href={to(`/links/${c.link_id}`)}>{`${c.domain}/${c.slug}`}</a> },
              { label: 'Type', render: (c) => (c.type === 'custom' && c.goal ? `Goal: ${c.goal}` : TYPES[c.type]) },
              { label: 'Amount', render: (c) => (c.amount !== null && c.currency ? formatMoney(c.amount, c.currency) : '—'), numeric: true },
              { label: 'Reference', render: (c) => c.external_id ?? '—' },
              { label: 'Visitor', render: (c) => [c.attribution.country ?? 'Unknown country', c.attribution.device].join(', ') },
            ]}
            rows={list.items}
            rowKey={(c) => c.id}
          />
        )}
        <Pager {...list.pager} />
      </section>
    </Page>
  );
}
