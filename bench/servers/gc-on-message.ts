// Preloaded into a benchmarked process started with --expose-gc: the bench sends `gc` over the IPC channel and gets
// `gc-done` back, so that memory it reads afterwards is what the process holds, not garbage not yet collected.
process.on('message', (message) => {
  if (message !== 'gc') return;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  process.send?.('gc-done');
});
// Listening on the channel must not keep the process alive.
process.channel?.unref();
