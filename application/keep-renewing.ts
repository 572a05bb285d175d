/**
 * The heartbeat of a lease held while work runs (an Idempotency-Key's record, a user's billing
 * lease): the lease is short, so a holder that died frees it within seconds, and the living holder
 * renews it until its work is done.
 *
 * Calls `renew` every `everyMs` until stopped, one call at a time (a slow renewal delays the next
 * rather than piling up). A failed renewal (the database away for a moment) is tried again at the
 * next beat: the lease lasts several beats. `stop` waits for a renewal in flight, so nothing renews
 * after the answer is stored.
 */
export function keepRenewing(renew: () => Promise<unknown>, everyMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let inFlight: Promise<unknown> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout>;
  const beat = () => {
    timer = setTimeout(() => {
      if (stopped) return;
      inFlight = renew()
        .catch(() => undefined)
        .finally(() => {
          if (!stopped) beat();
        });
    }, everyMs);
    timer.unref?.();
  };
  beat();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
