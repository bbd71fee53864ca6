import { useEffect, useRef, useState } from 'preact/hooks';
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
        <li class="key-visitors">Unique visitors (estimate)</li>
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

/** The tooltip's sentence for one bucket. */
function bucketText(bucket: Bucket, granularity: Timeseries['granularity']): string {
  return `${wallTime(bucket.start, granularity)}: ${count(bucket.clicks)} click${bucket.clicks === 1 ? '' : 's'}, ${count(bucket.unique_visitors)} unique visitor${bucket.unique_visitors === 1 ? '' : 's'} (estimate)`;
}

/**
 * The uPlot canvas with a tooltip: the mouse shows the bucket under it; with the keyboard, the chart takes focus and
 * the arrow keys (Home, End) step through the buckets, the tooltip text also read out as a status. Clicks are drawn
 * last, above unique visitors, which can never exceed them.
 */
function Canvas({ series, description }: { series: Timeseries; description: string }) {
  const holder = useRef<HTMLDivElement>(null);
  const tip = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [index, setIndex] = useState<number | null>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const zone = series.range.timezone;
    const xs = series.data.map((b) => Date.parse(b.start) / 1000);
    const data: uPlot.AlignedData = [xs, series.data.map((b) => b.unique_visitors), series.data.map((b) => b.clicks)];
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
          { label: 'Unique visitors', stroke: VISITORS_COLOUR, width: 2, points: { show: xs.length <= 62 } },
          { label: 'Clicks', stroke: CLICKS_COLOUR, width: 2, fill: 'rgba(1, 114, 173, 0.12)', points: { show: xs.length <= 62 } },
        ],
        hooks: { setCursor: [(u) => setIndex(u.cursor.idx ?? null)] },
      },
      data,
      element,
    );
    plot.current = chart;
    const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: 260 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.current = null;
      chart.destroy();
    };
  }, [series]);

  // The tooltip follows the bucket, inside the chart's width (CSSOM, which the CSP allows).
  useEffect(() => {
    const chart = plot.current;
    const box = tip.current;
    if (!chart || !box || index === null) return;
    const x = chart.valToPos(chart.data[0][index]!, 'x') + chart.over.offsetLeft;
    const max = (holder.current?.clientWidth ?? 0) - box.offsetWidth;
    box.style.left = `${Math.max(0, Math.min(max, x - box.offsetWidth / 2))}px`;
  }, [index]);

  const moveTo = (next: number) => {
    const chart = plot.current;
    if (!chart || series.data.length === 0) return;
    const i = Math.max(0, Math.min(series.data.length - 1, next));
    const top = chart.valToPos(series.data[i]!.clicks, 'y');
    chart.setCursor({ left: chart.valToPos(chart.data[0][i]!, 'x'), top });
    setIndex(i);
  };
  const onKey = (event: KeyboardEvent) => {
    const last = series.data.length - 1;
    const at = index ?? -1;
    const next = { ArrowRight: at + 1, ArrowLeft: at < 0 ? last : at - 1, Home: 0, End: last }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    moveTo(next);
  };
  const bucket = index === null ? null : series.data[index];
  return (
    <div
      class="chart-frame"
      tabIndex={0}
      role="group"
      aria-label="Clicks over time: use the arrow keys to read each bucket"
      onKeyDown={onKey}
      onFocus={() => index === null && moveTo(series.data.length - 1)}
      data-testid="chart-frame"
    >
      <div class="chart" ref={holder} role="img" aria-label={description} data-testid="timeseries-chart" />
      <div ref={tip} class={`chart-tip${bucket ? '' : ' hidden'}`} role="status" data-testid="chart-tooltip">
        {bucket ? bucketText(bucket, series.granularity) : ''}
      </div>
    </div>
  );
}
