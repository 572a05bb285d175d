/**
 * Side effects leave through the database: a message is recorded in the caller's transaction and
 * delivered by a background job after commit, with retries.
 */
export interface Outbox {
  enqueue(topic: string, payload: Record<string, unknown>): Promise<string>;
}
