import type { DeviceSighting, KnownDeviceStore } from '../../application/notifications/new-device';
import type { Database } from './database';

/** The devices each end user signed in from (`known_devices`), for the new-device notice. */
export class PostgresKnownDeviceStore implements KnownDeviceStore {
  constructor(private readonly db: Database) {}

  /**
   * One statement: whether the user had any device before, and the upsert of this one (`xmax = 0`
   * tells an inserted row from an updated one).
   */
  async remember(projectId: string, userId: string, fingerprint: string, at: Date): Promise<DeviceSighting> {
    const rows = await this.db.query<{ inserted: boolean; had_any: boolean }>(
      `with prior as (
         select exists (select 1 from known_devices where project_id = ? and user_id = ?) as had_any
       ), seen as (
         insert into known_devices (project_id, user_id, fingerprint, first_seen_at, last_seen_at)
         values (?, ?, ?, ?, ?)
         on conflict (project_id, user_id, fingerprint) do update set last_seen_at = excluded.last_seen_at
         returning (xmax = 0) as inserted
       )
       select seen.inserted, prior.had_any from seen, prior`,
      [projectId, userId, projectId, userId, fingerprint, at, at],
    );
    const row = rows[0];
    if (!row?.inserted) return 'known';
    return row.had_any ? 'new' : 'first';
  }
}
