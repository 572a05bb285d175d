/**
 * Runs `run` with an AbortSignal that is aborted, and a rejection, once `seconds` pass. The work
 * itself may go on if it ignores the signal; the caller has moved on.
 */
export async function withTimeout<T>(seconds: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`timed out after ${seconds} s`);
      controller.abort(error);
      reject(error);
    }, seconds * 1000);
  });
  try {
    return await Promise.race([run(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}
