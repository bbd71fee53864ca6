import type { Figures, Summary } from './analytics-types.ts';
import { change, count, money, rangeText } from './format.ts';
import { importedClicksText } from '../../components/imported-clicks.ts';

const TILES: { key: keyof Omit<Figures, 'revenue'>; label: string }[] = [
  { key: 'clicks', label: 'Clicks' },
  { key: 'unique_visitors', label: 'Unique visitors' },
  { key: 'human_clicks', label: 'Human clicks' },
  { key: 'bot_clicks', label: 'Bot clicks' },
  { key: 'conversions', label: 'Conversions' },
];

/** The range's totals, each against the period of equal length just before. */
export function SummaryTiles({ summary }: { summary: Summary }) {
  const previous = summary.previous;
  return (
    <section aria-labelledby="summary-title">
      <h2 id="summary-title" class="visually-hidden">
        Summary
      </h2>
      <p class="range-note">
        {rangeText(summary.range)}; compared with {rangeText({ ...previous, timezone: summary.range.timezone })}.
      </p>
      <dl class="tiles">
        {TILES.map(({ key, label }) => {
          const delta = change(summary[key], previous[key]);
          return (
            <div key={key} class="tile">
              <dt>{label}</dt>
              <dd class="tile-value" data-testid={`tile-${key}`}>
                {count(summary[key])}
              </dd>
              {key === 'unique_visitors' && (
                <dd class="tile-note" data-testid="unique-visitors-estimate">
                  {summary.unique_visitors_error > 0 ? `Estimate, ±${(summary.unique_visitors_error * 100).toFixed(1)} %` : 'Exact count'}
                </dd>
              )}
              <dd class={`tile-change tile-${delta.direction}`}>
                {delta.text} <span class="visually-hidden">against the previous period</span>
                <span aria-hidden="true"> vs previous</span> ({count(previous[key])})
              </dd>
            </div>
          );
        })}
        <div class="tile">
          <dt>Revenue</dt>
          <dd class="tile-value">{money(summary.revenue)}</dd>
          <dd class="tile-change">previous: {money(previous.revenue)}</dd>
        </div>
      </dl>
      {summary.imported_clicks && summary.imported_clicks.total > 0 && (
        <section class="imported-clicks" aria-labelledby="imported-clicks-title">
          <h3 id="imported-clicks-title">Imported click totals</h3>
          <p class="muted">
            Counted by another service before the links came here: not part of the figures above, and not tied to this range.
          </p>
          <ul>
            {summary.imported_clicks.sources.map((s) => (
              <li key={s.source} data-testid={`imported-${s.source}`}>
                {importedClicksText(s.source, s.clicks, s.last_imported_at)} ({count(s.links)} {s.links === 1 ? 'link' : 'links'})
              </li>
            ))}
          </ul>
        </section>
      )}
    </section>
  );
}
