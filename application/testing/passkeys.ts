/**
 * Strict fakes of the passkey ports (application/passkeys), for the unit tests of its use cases.
 *
 * The stores keep their rows in memory with the PostgreSQL adapters' rules (a challenge is spent
 * once, by project, ceremony and hash, while live; a use moves the counter by compare and set). The
 * ceremonies fake does no cryptography: a response's `clientDataJSON` is the challenge itself
 * (empty: unreadable), and each verification answers what the test scripted for it.
 */
import type { Passkey, PasskeyCeremony } from '../../domain/passkeys/passkey';
import type {
  AuthenticationOptionsInput,
  CeremonyCheck,
  ExpectedCeremony,
  PasskeyCeremonies,
  RegisteredCredential,
  RegistrationOptionsInput,
  VerifiedAssertion,
} from '../passkeys/ceremonies';
import type { PasskeyChallengeRecord, PasskeyChallengeStore, PasskeyStore } from '../passkeys/passkey.store';
import { type CallLog, strictFake } from './fakes';

export function aPasskey(overrides: Partial<Passkey> = {}): Passkey {
  return {
    id: 'passkey-1',
    projectId: 'project-1',
    userId: 'user-1',
    credentialId: 'cred-1',
    publicKey: new Uint8Array([1, 2, 3]),
    counter: 0,
    transports: ['internal'],
    aaguid: '00000000-0000-0000-0000-000000000000',
    authenticatorName: null,
    deviceType: 'multiDevice',
    backedUp: true,
    name: 'Passkey 1',
    createdAt: new Date('2029-06-01T00:00:00.000Z'),
    lastUsedAt: null,
    ...overrides,
  };
}

/** The passkeys in memory, logged as `passkeys.<method>`; `rows` is what is stored. */
export function fakePasskeyStore(log: CallLog, initial: Passkey[] = [], overrides: Partial<PasskeyStore> = {}): PasskeyStore & { rows: Passkey[] } {
  const rows = initial.map((p) => ({ ...p }));
  // Copies, as a database answers: a use case never holds the stored row itself.
  const mine = (projectId: string, userId: string) => rows.filter((p) => p.projectId === projectId && p.userId === userId).map((p) => ({ ...p }));
  const row = (passkeyId: string) => rows.find((p) => p.id === passkeyId);
  const store: PasskeyStore = {
    async insert(passkey) {
      if (rows.some((p) => p.projectId === passkey.projectId && p.credentialId === passkey.credentialId)) return false;
      rows.push({ ...passkey });
      return true;
    },
    async findByCredentialId(projectId, credentialId) {
      const found = rows.find((p) => p.projectId === projectId && p.credentialId === credentialId);
      return found ? { ...found } : null;
    },
    find: async (projectId, userId, passkeyId) => mine(projectId, userId).find((p) => p.id === passkeyId) ?? null,
    listForUser: async (projectId, userId) => mine(projectId, userId).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()),
    countForUser: async (projectId, userId) => mine(projectId, userId).length,
    async recordUse(passkeyId, _checkedCounter, use) {
      // As the PostgreSQL store: above the counter stored now, or both zero.
      const stored = row(passkeyId);
      if (!stored || !(stored.counter < use.counter || (stored.counter === 0 && use.counter === 0))) return false;
      Object.assign(stored, { counter: use.counter, backedUp: use.backedUp, lastUsedAt: use.at });
      return true;
    },
    async rename(projectId, userId, passkeyId, name) {
      const stored = mine(projectId, userId).some((p) => p.id === passkeyId) ? row(passkeyId) : undefined;
      if (!stored) return null;
      stored.name = name;
      return { ...stored };
    },
    async remove(projectId, userId, passkeyId) {
      const stored = mine(projectId, userId).some((p) => p.id === passkeyId) ? row(passkeyId) : undefined;
      if (!stored) return null;
      rows.splice(rows.indexOf(stored), 1);
      return stored;
    },
  };
  return strictFake<PasskeyStore & { rows: Passkey[] }>('passkeys', { ...store, ...overrides, rows }, log);
}

/**
 * The challenges in memory, by hash, logged as `challenges.<method>`: `consume` answers a live
 * challenge of that project, ceremony and hash once. `stored` is what was inserted, and whether it was spent.
 */
export function fakePasskeyChallengeStore(
  log: CallLog,
): PasskeyChallengeStore & { stored: Array<{ record: PasskeyChallengeRecord; hash: string; spent: boolean }> } {
  const stored: Array<{ record: PasskeyChallengeRecord; hash: string; spent: boolean }> = [];
  // purgeExpired is left out: a use case that calls it fails its test (UnexpectedCall).
  const store: Omit<PasskeyChallengeStore, 'purgeExpired'> = {
    async insert(record, challengeHash) {
      stored.push({ record: { ...record }, hash: challengeHash, spent: false });
    },
    async consume(projectId: string, ceremony: PasskeyCeremony, challengeHash: string, at: Date) {
      const row = stored.find(
        (c) => !c.spent && c.hash === challengeHash && c.record.projectId === projectId && c.record.ceremony === ceremony && c.record.expiresAt > at,
      );
      if (!row) return null;
      row.spent = true;
      return { ...row.record };
    },
  };
  return strictFake<PasskeyChallengeStore & { stored: typeof stored }>('challenges', { ...store, stored }, log);
}

/** What a test scripts for the verifications: answers in order (the last one repeats), or refusals. */
export interface CeremonyScript {
  registrations?: Array<CeremonyCheck<RegisteredCredential>>;
  assertions?: Array<CeremonyCheck<VerifiedAssertion>>;
  /** AAGUID -> model name. */
  names?: Record<string, string>;
}

export const verified = <T>(value: T): CeremonyCheck<T> => ({ ok: true, value });
export const refused = (reason: string): CeremonyCheck<never> => ({ ok: false, error: 'passkey_verification_failed', reason });

export function aRegisteredCredential(overrides: Partial<RegisteredCredential> = {}): RegisteredCredential {
  return {
    credentialId: 'cred-new',
    publicKey: new Uint8Array([9, 9, 9]),
    counter: 0,
    transports: ['internal', 'hybrid'],
    aaguid: 'adce0002-35bc-c60a-648b-0b25f1f05503',
    deviceType: 'multiDevice',
    backedUp: true,
    userVerified: true,
    ...overrides,
  };
}

/**
 * The ceremonies port without cryptography, logged as `ceremonies.<method>`: options echo their
 * input (`{ kind, ...input }`), `challengeOf` reads the challenge from `clientDataJSON` as is, and
 * the verifications answer the script.
 */
export function fakePasskeyCeremonies(log: CallLog, script: CeremonyScript = {}): PasskeyCeremonies {
  const next = <T>(list: T[] | undefined, what: string): T => {
    if (!list || list.length === 0) throw new Error(`no ${what} scripted`);
    return list.length > 1 ? (list.shift() as T) : (list[0] as T);
  };
  return strictFake<PasskeyCeremonies>(
    'ceremonies',
    {
      registrationOptions: async (input: RegistrationOptionsInput) => ({ kind: 'creation', ...input }),
      authenticationOptions: async (input: AuthenticationOptionsInput) => ({ kind: 'request', ...input }),
      challengeOf: (response) => response.response.clientDataJSON || null,
      verifyRegistration: async (_response: unknown, _expected: ExpectedCeremony) => next(script.registrations, 'registration'),
      verifyAuthentication: async (_response: unknown, _expected: ExpectedCeremony) => next(script.assertions, 'assertion'),
      authenticatorName: (aaguid: string) => script.names?.[aaguid] ?? null,
    },
    log,
  );
}

/** A browser's answer signing `challenge` with credential `credentialId` (for the fake ceremonies). */
export const anAnswer = (challenge: string, credentialId = 'cred-1') => ({ id: credentialId, rawId: credentialId, response: { clientDataJSON: challenge } });
