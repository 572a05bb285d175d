import type { PasskeyChallengeRecord, PasskeyChallengeStore, PasskeyStore, PasskeyUse, SignInMethodsReader } from '../../application/passkeys/passkey.store';
import type { Passkey, PasskeyCeremony } from '../../domain/passkeys/passkey';
import type { PasskeyUserVerification } from '../../domain/passkeys/relying-party';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toPasskey = rowMapper<Passkey>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  credentialId: read.text,
  publicKey: (v) => new Uint8Array(v as Buffer),
  counter: read.number,
  transports: (v) => (Array.isArray(v) ? (v as string[]) : []),
  aaguid: read.text,
  authenticatorName: read.textOrNull,
  deviceType: read.as<Passkey['deviceType']>(),
  backedUp: read.bool,
  name: read.text,
  createdAt: read.date,
  lastUsedAt: read.dateOrNull,
});

const toChallenge = rowMapper<PasskeyChallengeRecord>({
  id: read.text,
  projectId: read.text,
  ceremony: read.as<PasskeyCeremony>(),
  userId: read.textOrNull,
  mfaChallengeId: read.textOrNull,
  enrollmentChallengeId: read.textOrNull,
  userVerification: read.as<PasskeyUserVerification>(),
  createdAt: read.date,
  expiresAt: read.date,
});

/** Passkeys in PostgreSQL: the credential id is unique per project; a use moves the counter by compare and set. */
export class PostgresPasskeyStore implements PasskeyStore, SignInMethodsReader {
  constructor(private readonly db: Database) {}

  async insert(p: Passkey): Promise<boolean> {
    const rows = await this.db.query(
      `insert into passkeys (id, project_id, user_id, credential_id, public_key, counter, transports, aaguid, authenticator_name, device_type,
                             backed_up, name, created_at, last_used_at)
       values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?)
       on conflict (project_id, credential_id) do nothing
       returning id`,
      [
        p.id,
        p.projectId,
        p.userId,
        p.credentialId,
        Buffer.from(p.publicKey),
        p.counter,
        JSON.stringify(p.transports),
        p.aaguid,
        p.authenticatorName,
        p.deviceType,
        p.backedUp,
        p.name,
        p.createdAt,
        p.lastUsedAt,
      ],
    );
    return rows.length === 1;
  }

  async findByCredentialId(projectId: string, credentialId: string): Promise<Passkey | null> {
    return toPasskey.first(
      await this.db.query(`select ${toPasskey.columns} from passkeys where project_id = ? and credential_id = ?`, [projectId, credentialId]),
    );
  }

  async find(projectId: string, userId: string, passkeyId: string): Promise<Passkey | null> {
    if (!isUuid(passkeyId) || !isUuid(userId)) return null;
    return toPasskey.first(
      await this.db.query(`select ${toPasskey.columns} from passkeys where project_id = ? and user_id = ? and id = ?`, [projectId, userId, passkeyId]),
    );
  }

  async listForUser(projectId: string, userId: string): Promise<Passkey[]> {
    if (!isUuid(userId)) return [];
    const rows = await this.db.query(`select ${toPasskey.columns} from passkeys where project_id = ? and user_id = ? order by created_at desc, id`, [
      projectId,
      userId,
    ]);
    return rows.map((r) => toPasskey(r));
  }

  async countForUser(projectId: string, userId: string): Promise<number> {
    if (!isUuid(userId)) return 0;
    const rows = await this.db.query<{ n: string }>('select count(*) as n from passkeys where project_id = ? and user_id = ?', [projectId, userId]);
    return Number(rows[0]?.n ?? 0);
  }

  async recordUse(passkeyId: string, _checkedCounter: number, use: PasskeyUse): Promise<boolean> {
    // The counter only grows; authenticators that do not count stay at zero. Compared with the row as it is now (not as it was
    // read), so that two genuine uses at the same moment both pass when each counter is above the stored one; only one that is
    // not above it fails. Counters are 32-bit unsigned: bigint
    // parameters (`? = 0` alone would be typed integer, and 2^31 and above would fail).
    const rows = await this.db.query(
      `update passkeys set counter = ?::bigint, backed_up = ?, last_used_at = ?
        where id = ? and (counter < ?::bigint or (counter = 0 and ?::bigint = 0))
        returning id`,
      [use.counter, use.backedUp, use.at, passkeyId, use.counter, use.counter],
    );
    return rows.length === 1;
  }

  async rename(projectId: string, userId: string, passkeyId: string, name: string): Promise<Passkey | null> {
    if (!isUuid(passkeyId) || !isUuid(userId)) return null;
    return toPasskey.first(
      await this.db.query(`update passkeys set name = ? where project_id = ? and user_id = ? and id = ? returning ${toPasskey.columns}`, [
        name,
        projectId,
        userId,
        passkeyId,
      ]),
    );
  }

  async remove(projectId: string, userId: string, passkeyId: string): Promise<Passkey | null> {
    if (!isUuid(passkeyId) || !isUuid(userId)) return null;
    return toPasskey.first(
      await this.db.query(`delete from passkeys where project_id = ? and user_id = ? and id = ? returning ${toPasskey.columns}`, [
        projectId,
        userId,
        passkeyId,
      ]),
    );
  }

  async otherSignInMethods(projectId: string, userId: string): Promise<{ password: boolean; identities: number; emailVerified: boolean }> {
    if (!isUuid(userId)) return { password: false, identities: 0, emailVerified: false };
    const rows = await this.db.query<{ password: boolean; identities: string; email_verified: boolean }>(
      `select u.password_hash is not null as password, u.email_verified and u.email is not null as email_verified,
              (select count(*) from user_identities i where i.project_id = u.project_id and i.user_id = u.id) as identities
         from users u where u.project_id = ? and u.id = ?`,
      [projectId, userId],
    );
    const row = rows[0];
    return { password: row?.password === true, identities: Number(row?.identities ?? 0), emailVerified: row?.email_verified === true };
  }
}

/** Passkey challenges in PostgreSQL: spending one is a single conditional update. */
export class PostgresPasskeyChallengeStore implements PasskeyChallengeStore {
  constructor(private readonly db: Database) {}

  async insert(r: PasskeyChallengeRecord, challengeHash: string): Promise<void> {
    await this.db.query(
      `insert into passkey_challenges (id, project_id, ceremony, challenge_hash, user_id, mfa_challenge_id, enrollment_challenge_id, user_verification,
                                       created_at, expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.ceremony, challengeHash, r.userId, r.mfaChallengeId, r.enrollmentChallengeId, r.userVerification, r.createdAt, r.expiresAt],
    );
  }

  async consume(projectId: string, ceremony: PasskeyCeremony, challengeHash: string, at: Date): Promise<PasskeyChallengeRecord | null> {
    return toChallenge.first(
      await this.db.query(
        `update passkey_challenges set consumed_at = ?
          where challenge_hash = ? and project_id = ? and ceremony = ? and consumed_at is null and expires_at > ?
          returning ${toChallenge.columns}`,
        [at, challengeHash, projectId, ceremony, at],
      ),
    );
  }

  async purgeExpired(before: Date): Promise<number> {
    const rows = await this.db.query('delete from passkey_challenges where expires_at < ? returning id', [before]);
    return rows.length;
  }
}
