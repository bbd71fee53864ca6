// Preloaded into a benchmarked process started with --expose-gc: the bench sends `gc` over the IPC channel and gets
// `gc-done` back with process.memoryUsage(), so that memory read afterwards is what the process holds, not garbage
// not yet collected, and where it is (V8 heap, buffers outside it).
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

process.on('message', (message) => {
  if (message !== 'gc') return;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 1_048_576)]));
  process.send?.({ gcDone: process.memoryUsage(), spaces });
});
// Listening on the channel must not keep the process alive.
process.channel?.unref();

// BENCH_GC_PAUSES_MS=<ms>: each garbage-collection pause at least that long, on stderr, with the process and time, to
// tell whether a latency's tail is the process's own collector (its p99) or something outside it.
const pausesFrom = Number(process.env.BENCH_GC_PAUSES_MS ?? 0);
if (pausesFrom > 0) {
  const kinds: Record<number, string> = { 1: 'scavenge', 2: 'minor mark-sweep', 4: 'mark-compact', 8: 'incremental marking', 16: 'weak callbacks' };
  const who = `${process.argv[1]?.split('/').slice(-2).join('/') ?? 'node'} ${process.argv[2] ?? ''}`.trim();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration < pausesFrom) continue;
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      console.error(`gc pause ${entry.duration.toFixed(1)} ms (${kinds[kind] ?? kind}) in ${who} (pid ${process.pid}) at ${new Date().toISOString()}`);
    }
  }).observe({ entryTypes: ['gc'] });
}
