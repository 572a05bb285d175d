/**
 * One refresh at a time, in a tab and across the tabs of a browser. A refresh token rotates on
 * every use and Tollgate revokes the whole session when a rotated token comes back, so two tabs
 * refreshing at once with the same cookie would sign the user out. Web Locks (every current
 * browser) make the tabs take turns; where they are missing, the calls of one tab still share one
 * request, and the tabs tell each other each new session over a BroadcastChannel so that a tab
 * adopts the one another just got instead of asking again.
 */

/** The part of the Web Locks API used here (`navigator.locks`). */
export interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

/** The part of BroadcastChannel used here. */
export interface ChannelLike {
  postMessage(message: unknown): void;
  // `data` optional: a DOM or Node BroadcastChannel types its listener's event as a plain Event.
  addEventListener(type: 'message', listener: (event: { readonly type?: string; readonly data?: unknown }) => void): void;
  removeEventListener?(type: 'message', listener: (event: { readonly type?: string; readonly data?: unknown }) => void): void;
  close?(): void;
}

/** Runs `task` once at a time: callers arriving while it runs share its promise; with `locks`, also one at a time across tabs. */
export function singleFlight<T>(lockName: string, locks: LockManagerLike | null, task: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  return () => {
    if (inFlight) return inFlight;
    const run = locks ? locks.request(lockName, task) : task();
    inFlight = run.finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
}

/** `navigator.locks` when the browser has it. */
export function defaultLocks(): LockManagerLike | null {
  const nav = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator;
  return nav?.locks && typeof nav.locks.request === 'function' ? nav.locks : null;
}

/** A BroadcastChannel named `name` when the runtime has them. */
export function defaultChannel(name: string): ChannelLike | null {
  const Channel = (globalThis as unknown as { BroadcastChannel?: new (name: string) => ChannelLike }).BroadcastChannel;
  return typeof Channel === 'function' ? new Channel(name) : null;
}
