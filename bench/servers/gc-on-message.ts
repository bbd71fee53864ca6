// Preloaded into a benchmarked process started with --expose-gc: the bench sends `gc` over the IPC channel and gets
// `gc-done` back with process.memoryUsage(), so that memory read afterwards is what the process holds, not garbage
// not yet collected, and where it is (V8 heap, buffers outside it).
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
