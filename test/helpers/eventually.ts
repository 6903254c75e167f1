// Polls a condition that something asynchronous (an etcd watch, a controller round) makes true.

/** Resolves once `check` holds, checking every 20 ms; rejects naming `what` after `timeoutMs`. */
export async function eventually(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
