import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { DataTable } from '../../components/data-table.tsx';
import type { Bucket, Timeseries } from './analytics-types.ts';
import { count, wallTime } from './format.ts';

const CLICKS_COLOUR = '#0172ad';
const VISITORS_COLOUR = '#c2410c';

/**
 * Clicks and unique visitors per bucket: a uPlot canvas for the eye, and the same numbers as a table for everyone
 * else (the canvas itself is one image with a summary for screen readers). Times are the answer's zone's.
 */
export function TimeseriesChart({ series }: { series: Timeseries }) {
  const total = series.data.reduce((sum, b) => sum + b.clicks, 0);
  const peak = series.data.reduce<Bucket | null>((best, b) => (best === null || b.clicks > best.clicks ? b : best), null);
  const description =
    `Clicks and unique visitors per ${series.granularity}, ${series.data.length} buckets, ${count(total)} clicks in all` +
    (peak && peak.clicks > 0 ? `; most on ${wallTime(peak.start, series.granularity)} (${count(peak.clicks)})` : '');
  return (
    <section aria-labelledby="timeseries-title">
      <h2 id="timeseries-title">Clicks over time</h2>
      <Canvas series={series} description={description} />
      <ul class="chart-key" aria-hidden="true">
        <li class="key-clicks">Clicks</li>
        <li class="key-visitors">Unique visitors</li>
      </ul>
      <details class="chart-table">
        <summary>Show the numbers as a table</summary>
        <DataTable
          caption={`Clicks per ${series.granularity} (${series.range.timezone})`}
          rows={series.data}
          rowKey={(b) => b.start}
          columns={[
            { label: 'From', render: (b) => wallTime(b.start, series.granularity === 'hour' ? 'hour' : series.granularity) },
            { label: 'Clicks', numeric: true, render: (b) => count(b.clicks) },
            { label: 'Unique visitors', numeric: true, render: (b) => count(b.unique_visitors) },
            { label: 'Bot clicks', numeric: true, render: (b) => count(b.bot_clicks) },
            { label: 'Conversions', numeric: true, render: (b) => count(b.conversions) },
          ]}
        />
      </details>
    </section>
  );
}

function Canvas({ series, description }: { series: Timeseries; description: string }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const zone = series.range.timezone;
    const xs = series.data.map((b) => Date.parse(b.start) / 1000);
    const data: uPlot.AlignedData = [xs, series.data.map((b) => b.clicks), series.data.map((b) => b.unique_visitors)];
    const width = () => Math.max(element.clientWidth, 200);
    const chart = new uPlot(
      {
        width: width(),
        height: 260,
        // Axis labels and the cursor read in the answer's zone, not the browser's.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), zone),
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? count(t) : '')) }],
        series: [
          {},
          { label: 'Clicks', stroke: CLICKS_COLOUR, width: 2, fill: 'rgba(1, 114, 173, 0.12)', points: { show: xs.length <= 62 } },
          { label: 'Unique visitors', stroke: VISITORS_COLOUR, width: 2, points: { show: xs.length <= 62 } },
        ],
      },
      data,
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: 260 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [series]);
  return <div class="chart" ref={holder} role="img" aria-label={description} data-testid="timeseries-chart" />;
}
