import { useEffect, useState } from 'preact/hooks';
import { fetchAll } from '../../api.ts';
import { DataTable } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import type { Query } from '../../api.ts';
import { DIMENSIONS, VISITOR_FILTERS, dimensionLabel } from './analytics-params.ts';
import { unresolvedReason, type Breakdown, type BreakdownRow } from './analytics-types.ts';
import { count, money, percent } from './format.ts';
import { useFetch } from '../../components/use-fetch.ts';

interface BreakdownPanelProps {
  base: string;
  query: Query;
  dimension: string;
  partner: boolean;
  onDimension: (dimension: string) => void;
  /** Narrows the whole screen to one value (visitor dimensions only). */
  onFilter: (dimension: string, value: string) => void;
}

const FILTERABLE: ReadonlySet<string> = new Set(VISITOR_FILTERS);

/** Clicks per value of one dimension, most first; a value of a filterable dimension narrows the screen to it. */
export function BreakdownPanel({ base, query, dimension, partner, onDimension, onFilter }: BreakdownPanelProps) {
  const answer = useFetch<Breakdown>(`${base}/breakdown`, { ...query, dimension, limit: 50 });
  const choices = DIMENSIONS.filter((d) => partner || !d.partnerOnly);
  const label = dimensionLabel(dimension);
  const clientNames = useClientNames(partner && dimension === 'client');
  const canFilter = FILTERABLE.has(dimension) && !Object.keys(query).some((name) => FILTERABLE.has(name));
  return (
    <section aria-labelledby="breakdown-title" aria-busy={answer.loading ? 'true' : undefined}>
      <div class="section-header">
        <h2 id="breakdown-title">Breakdown</h2>
        <div class="inline-label">
          <label for="breakdown-dimension">Break down by</label>
          <select id="breakdown-dimension" value={dimension} onChange={(e) => onDimension(e.currentTarget.value)}>
            {choices.map((d) => (
              <option key={d.value} value={d.value}>
                {d.label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorBanner error={answer.error} title="The breakdown could not be loaded" />
      {answer.data && unresolvedReason(answer.data) && <p class="dimension-note">{unresolvedReason(answer.data)}</p>}
      {answer.data && answer.data.data.length === 0 && <EmptyState title={`No clicks by ${label.toLowerCase()} in this range`} />}
      {answer.data && answer.data.data.length > 0 && (
        <DataTable<BreakdownRow>
          caption={`Clicks by ${label.toLowerCase()}`}
          rows={answer.data.data}
          rowKey={(row) => row.value ?? '\u0000none'}
          columns={[
            {
              label,
              render: (row) =>
                row.value === null ? (
                  <em>{answer.data && unresolvedReason(answer.data) ? 'Unknown (not recorded)' : 'none'}</em>
                ) : canFilter ? (
                  <button type="button" class="link-button" onClick={() => onFilter(dimension, row.value!)} title={`Show only ${label.toLowerCase()} ${row.value}`}>
                    {row.value}
                  </button>
                ) : (
                  <span class="cell-text">{clientNames.get(row.value) ? `${clientNames.get(row.value)} (${row.value})` : row.value}</span>
                ),
            },
            { label: 'Clicks', numeric: true, render: (row) => count(row.clicks) },
            { label: 'Share', numeric: true, render: (row) => percent(row.share) },
            { label: answer.data.unique_visitors_error > 0 ? 'Unique visitors (estimate)' : 'Unique visitors', numeric: true, render: (row) => count(row.unique_visitors) },
            { label: 'Conversions', numeric: true, render: (row) => count(row.conversions) },
            { label: 'Revenue', numeric: true, render: (row) => money(row.revenue) },
          ]}
        />
      )}
    </section>
  );
}

/** Client workspace names by id, for a partner's breakdown by client (ids alone mean little to a person). */
function useClientNames(wanted: boolean): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  useEffect(() => {
    if (!wanted || names.size > 0) return;
    fetchAll<{ id: string; name: string }>('/v1/partner/clients').then(
      (clients) => setNames(new Map(clients.map((c) => [c.id, c.name]))),
      () => undefined, // the ids are still shown
    );
  }, [wanted, names]);
  return names;
}
