// Preloaded into a benchmarked process started with --expose-gc: the bench sends `gc` over the IPC channel and gets
// `gc-done` back with process.memoryUsage(), so that memory read afterwards is what the process holds, not garbage
// not yet collected, and where it is (V8 heap, buffers outside it).
process.on('message', (message) => {
  if (message !== 'gc') return;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  process.send?.({ gcDone: process.memoryUsage() });
});
// Listening on the channel must not keep the process alive.
process.channel?.unref();
