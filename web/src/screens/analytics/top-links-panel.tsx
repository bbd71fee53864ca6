import { DataTable } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import type { Query } from '../../api.ts';
import type { TopLink, TopLinks } from './analytics-types.ts';
import { count, money } from './format.ts';
import { useFetch } from '../../components/use-fetch.ts';

/** The links with most clicks; each opens the same screen narrowed to that link. */
export function TopLinksPanel({ query, onPick }: { query: Query; onPick: (linkId: string) => void }) {
  const answer = useFetch<TopLinks>('/v1/analytics/links/top', { ...query, limit: 10 });
  return (
    <section aria-labelledby="top-links-title" aria-busy={answer.loading ? 'true' : undefined}>
      <h2 id="top-links-title">Top links</h2>
      <ErrorBanner error={answer.error} title="The top links could not be loaded" />
      {answer.data && answer.data.data.length === 0 && <EmptyState title="No link was clicked in this range" />}
      {answer.data && answer.data.data.length > 0 && (
        <DataTable<TopLink>
          caption="Links with most clicks"
          rows={answer.data.data}
          rowKey={(link) => link.id}
          columns={[
            {
              label: 'Link',
              render: (link) => (
                <button type="button" class="link-button" onClick={() => onPick(link.id)} title="Analytics of this link">
                  {link.short_url ?? `${link.id} (deleted)`}
                </button>
              ),
            },
            { label: 'Destination', render: (link) => <span class="cell-text">{link.url ?? '—'}</span> },
            { label: 'Clicks', numeric: true, render: (link) => count(link.clicks) },
            { label: 'Unique visitors', numeric: true, render: (link) => count(link.unique_visitors) },
            { label: 'Conversions', numeric: true, render: (link) => count(link.conversions) },
            { label: 'Revenue', numeric: true, render: (link) => money(link.revenue) },
          ]}
        />
      )}
    </section>
  );
}
