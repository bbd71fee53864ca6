import { useLocation } from 'preact-iso';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Page } from '../../components/page.tsx';
import { to } from '../../paths.ts';
import { useCurrentContext } from '../../session.ts';
import { analyticsBase, apiQuery, parseParams, screenQuery, type AnalyticsParams } from './analytics-params.ts';
import type { Summary, Timeseries } from './analytics-types.ts';
import { BreakdownPanel } from './breakdown-panel.tsx';
import { OverviewPanels } from './overview-panels.tsx';
import { ExportButton } from './export-button.tsx';
import { FiltersBar } from './filters-bar.tsx';
import { RangeControls } from './range-controls.tsx';
import { SummaryTiles } from './summary-tiles.tsx';
import { TimeseriesChart } from './timeseries-chart.tsx';
import { TopLinksPanel } from './top-links-panel.tsx';
import { LiveFeed } from './live-feed.tsx';
import { useFetch } from '../../components/use-fetch.ts';
import './analytics.css';

interface LinkView {
  id: string;
  short_url: string;
  url: string;
}

/**
 * Analytics of the workspace in view (or, for a partner, across its clients): totals against the previous period,
 * clicks over time, a breakdown by any dimension and the top links. Everything shown is in the URL.
 */
export default function AnalyticsScreen() {
  const context = useCurrentContext();
  const partner = context.kind === 'partner';
  const { query: urlQuery, route } = useLocation();
  const params = useMemo(() => parseParams(urlQuery), [urlQuery]);
  const [answeredZone, setAnsweredZone] = useState<string | null>(null);
  const base = analyticsBase(context.kind);
  const query = apiQuery(params, params.timezone || answeredZone || 'UTC', context.kind);

  const summary = useFetch<Summary>(`${base}/summary`, query);
  const series = useFetch<Timeseries>(`${base}/timeseries`, query);
  useEffect(() => {
    if (summary.data) setAnsweredZone(summary.data.range.timezone);
  }, [summary.data]);

  const linkIds = params.filters.link_id?.split(',') ?? [];
  const link = useFetch<LinkView>(!partner && linkIds.length === 1 ? `/v1/links/${encodeURIComponent(linkIds[0]!)}` : null);

  const update = (next: Partial<AnalyticsParams>) => route(`${to('/analytics')}${screenQuery({ ...params, ...next })}`, true);
  const title = link.data ? `Analytics of ${link.data.short_url.replace(/^https?:\/\//, '')}` : 'Analytics';

  return (
    <Page title={title} actions={partner ? undefined : <ExportButton query={query} />}>
      {link.data && (
        <p class="link-context">
          Destination: <span class="cell-text">{link.data.url}</span>. <a href={to(`/links/${encodeURIComponent(link.data.id)}`)}>Edit the link</a> ·{' '}
          <a href={to('/analytics')}>All links</a>
        </p>
      )}
      {partner && <p>Traffic across every client workspace of {context.name}.</p>}
      <RangeControls key={`${params.from}-${params.to}`} params={params} answeredZone={answeredZone} onChange={update} />
      <FiltersBar filters={params.filters} partner={partner} onChange={(filters) => update({ filters })} />
      <ErrorBanner error={summary.error ?? series.error} title="The analytics could not be loaded" />
      <div aria-busy={summary.loading || series.loading ? 'true' : undefined} class="analytics-figures">
        {summary.data && <SummaryTiles summary={summary.data} />}
      </div>
      {series.data && <TimeseriesChart series={series.data} />}
      <OverviewPanels base={base} query={query} onFilter={(name, value) => update({ filters: { ...params.filters, [name]: value } })} />
      <BreakdownPanel
        base={base}
        query={query}
        dimension={params.dimension}
        partner={partner}
        onDimension={(dimension) => update({ dimension })}
        onFilter={(name, value) => update({ filters: { ...params.filters, [name]: value } })}
      />
      {!partner && <TopLinksPanel query={query} onPick={(id) => update({ filters: { ...params.filters, link_id: id } })} />}
      {!partner && <LiveFeed linkId={linkIds.length === 1 ? linkIds[0]! : null} />}
    </Page>
  );
}
