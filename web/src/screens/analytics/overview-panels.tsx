// Several breakdowns at a glance: countries (a choropleth list: each country shaded by its share), devices, browsers
// and referring sites, side by side. Each row's figures show on hover and on keyboard focus (every row is in the tab
// order), and are in the row's accessible description for screen readers.
import { useId } from 'preact/hooks';
import type { Query } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { useFetch } from '../../components/use-fetch.ts';
import { unresolvedReason, type Breakdown, type BreakdownRow } from './analytics-types.ts';
import { count, percent } from './format.ts';
import { VISITOR_FILTERS } from './analytics-params.ts';

const PANELS = [
  { dimension: 'country', title: 'Countries', map: true },
  { dimension: 'device', title: 'Devices' },
  { dimension: 'browser', title: 'Browsers' },
  { dimension: 'referer', title: 'Referring sites' },
] as const;

const DEVICE_NAMES: Record<string, string> = { desktop: 'Desktop', mobile: 'Mobile', tablet: 'Tablet' };

const regionNames = (() => {
  try {
    return new Intl.DisplayNames(['en'], { type: 'region' });
  } catch {
    return null;
  }
})();

function valueName(dimension: string, value: string | null, unresolved: boolean): string {
  if (value === null) return unresolved ? 'Unknown (not recorded)' : dimension === 'referer' ? 'Direct or unknown' : 'Unknown';
  if (dimension === 'country') return regionNames?.of(value) ?? value;
  if (dimension === 'device') return DEVICE_NAMES[value] ?? value;
  return value;
}

const VISITOR_FILTER_NAMES: ReadonlySet<string> = new Set(VISITOR_FILTERS);

export function OverviewPanels({ base, query, onFilter }: { base: string; query: Query; onFilter: (dimension: string, value: string) => void }) {
  // The api takes one visitor filter per request: with one set, values are not offered as filters.
  const canFilter = !Object.keys(query).some((name) => VISITOR_FILTER_NAMES.has(name));
  const filter = canFilter ? onFilter : null;
  return (
    <div class="overview-panels">
      {PANELS.map((panel) => (
        <Panel key={panel.dimension} base={base} query={query} dimension={panel.dimension} title={panel.title} map={'map' in panel} onFilter={filter} />
      ))}
    </div>
  );
}

function Panel({ base, query, dimension, title, map, onFilter }: { base: string; query: Query; dimension: string; title: string; map: boolean; onFilter: ((d: string, v: string) => void) | null }) {
  const answer = useFetch<Breakdown>(`${base}/breakdown`, { ...query, dimension, limit: 8 });
  const headingId = useId();
  const data = answer.data;
  const reason = data ? unresolvedReason(data) : null;
  const top = data?.data[0]?.clicks ?? 0;
  return (
    <section class="overview-panel" aria-labelledby={headingId} aria-busy={answer.loading ? 'true' : undefined} data-testid={`panel-${dimension}`}>
      <h3 id={headingId}>{title}</h3>
      <ErrorBanner error={answer.error} title={`The ${title.toLowerCase()} could not be loaded`} />
      {reason && <p class="dimension-note">{reason}</p>}
      {data && data.data.length === 0 && <p class="muted">No clicks in this range.</p>}
      {data && data.data.length > 0 && (
        <ul class={`bar-list${map ? ' choropleth' : ''}`}>
          {data.data.map((row) => (
            <Row key={row.value ?? '\u0000'} row={row} dimension={dimension} top={top} estimate={data.unique_visitors_error} unresolved={reason !== null} map={map} onFilter={onFilter} />
          ))}
        </ul>
      )}
    </section>
  );
}

function Row({ row, dimension, top, estimate, unresolved, map, onFilter }: { row: BreakdownRow; dimension: string; top: number; estimate: number; unresolved: boolean; map: boolean; onFilter: ((d: string, v: string) => void) | null }) {
  const tipId = useId();
  const name = valueName(dimension, row.value, unresolved);
  const width = top > 0 ? Math.max(2, Math.round((row.clicks / top) * 100)) : 0;
  // Five shades for the choropleth list, by share of all clicks.
  const shade = Math.min(4, Math.floor(row.share * 5));
  const visitors = `${count(row.unique_visitors)} unique visitor${row.unique_visitors === 1 ? '' : 's'}${estimate > 0 ? ` (estimate, ±${(estimate * 100).toFixed(1)} %)` : ''}`;
  const tip = `${count(row.clicks)} click${row.clicks === 1 ? '' : 's'}, ${percent(row.share)} of all; ${visitors}${row.conversions > 0 ? `; ${count(row.conversions)} conversions` : ''}`;
  const filterable = row.value !== null && onFilter !== null;
  return (
    <li class={`bar-row${map ? ` shade-${shade}` : ''}`}>
      {filterable ? (
        <button type="button" class="bar-label link-button" aria-describedby={tipId} onClick={() => onFilter?.(dimension, row.value!)}>
          {map && row.value && <code class="country-code">{row.value}</code>}
          {name}
          <span class="visually-hidden"> (show only this)</span>
        </button>
      ) : (
        <span class="bar-label" tabIndex={0} aria-describedby={tipId}>
          {name}
        </span>
      )}
      <span class="bar-count">{count(row.clicks)}</span>
      <span class="bar" aria-hidden="true">
        <span class="bar-fill" style={{ width: `${width}%` }} />
      </span>
      <span role="tooltip" id={tipId} class="bar-tip">
        {name}: {tip}
      </span>
    </li>
  );
}
