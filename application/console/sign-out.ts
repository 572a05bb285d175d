import type { Clock } from '../ports/clock';
import type { ConsoleStore } from './console.store';

/** Ends a console session: its cookie stops working at once. */
export function makeConsoleSignOut(deps: { store: Pick<ConsoleStore, 'revokeSession'>; clock: Clock }) {
  return (sessionId: string) => deps.store.revokeSession(sessionId, deps.clock.now());
}
