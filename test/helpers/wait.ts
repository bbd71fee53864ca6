/**
 * Waits for `check` to give something other than false (its value is returned), asking every 25 ms; fails the
 * test with `what` after `timeoutMs` instead of hanging. A bound on waiting, never a timing assertion.
 */
export async function until<T>(check: () => Promise<T | false> | T | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
