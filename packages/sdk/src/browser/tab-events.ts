/**
 * What the client hears besides its own calls: the other tabs of the browser (a new session, a
 * sign-out, a change of the subscription or of the user's organizations) on the shared channel, and the page becoming visible.
 */
import type { BrowserSession } from '../types';
import type { ChannelLike } from './single-flight';

export type TabMessage =
  | { type: 'session'; session: BrowserSession }
  | { type: 'signed-out' }
  | { type: 'billing-changed' }
  | { type: 'organizations-changed' };

/** Tells the other tabs; a closed channel is ignored. */
export function tellOtherTabs(channel: ChannelLike | null, message: TabMessage): void {
  try {
    channel?.postMessage(message);
  } catch {
    // A closed channel: the other tabs learn on their next refresh.
  }
}

/** Calls `onMessage` with what the other tabs say; answers the function that stops listening and closes the channel. */
export function listenToOtherTabs(channel: ChannelLike, onMessage: (message: TabMessage) => void): () => void {
  const listener = (event: { readonly type?: string; readonly data?: unknown }) => onMessage(event.data as TabMessage);
  channel.addEventListener('message', listener);
  return () => {
    channel.removeEventListener?.('message', listener);
    channel.close?.();
  };
}

/** The part of `document` the client watches. */
interface VisibilityTarget {
  visibilityState: string;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

/** Calls `onVisible` each time the page becomes visible; answers the function that stops it, or null without a document. */
export function watchVisibility(onVisible: () => void): (() => void) | null {
  const doc = (globalThis as { document?: VisibilityTarget }).document;
  if (!doc || typeof doc.addEventListener !== 'function') return null;
  const listener = () => {
    if (doc.visibilityState === 'visible') onVisible();
  };
  doc.addEventListener('visibilitychange', listener);
  return () => doc.removeEventListener('visibilitychange', listener);
}
