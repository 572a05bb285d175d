import { PASSKEY_CEREMONY_TIMEOUT_MS, PASSKEY_CHALLENGE_TTL_SECONDS, type Passkey, type PasskeyCeremony } from '../../domain/passkeys/passkey';
import { relyingParty, type RelyingParty } from '../../domain/passkeys/relying-party';
import { effectiveMfaMethods } from '../../domain/mfa';
import type { Project } from '../../domain/project';
import { isProviderEnabled } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { AuditLog } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ExpectedCeremony, PasskeyCeremonies } from './ceremonies';
import type { PasskeyChallengeRecord, PasskeyChallengeStore, PasskeyStore } from './passkey.store';

/** What every passkey use case is built on. */
export interface PasskeyDeps {
  passkeys: PasskeyStore;
  challenges: PasskeyChallengeStore;
  ceremonies: PasskeyCeremonies;
  crypto: Pick<TokenCrypto, 'randomToken' | 'hash' | 'uuid'>;
  clock: Clock;
  audit: AuditLog;
  notify: NotifySecurityEvent;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  /** Ceremonies (options and verifications) per IP. */
  limit: { points: number; windowMs: number };
  uow: UnitOfWork;
}

export type PasskeysUnavailable = 'passkeys_disabled' | 'passkey_not_configured';

/** How passkeys are used: to sign in (the provider toggle), as a second factor (an allowed MFA method), or either. */
export type PasskeyUse = 'sign_in' | 'mfa' | 'any';

const signInEnabled = (project: Project) => isProviderEnabled(project, 'passkey');
const mfaEnabled = (project: Project) => project.settings.mfaPolicy !== 'off' && effectiveMfaMethods(project.settings.mfaMethods).includes('passkey');

/** The project's relying party, when passkeys are on for this use. */
export function passkeysFor(project: Project, use: PasskeyUse): Result<RelyingParty, PasskeysUnavailable> {
  const on = use === 'sign_in' ? signInEnabled(project) : use === 'mfa' ? mfaEnabled(project) : signInEnabled(project) || mfaEnabled(project);
  if (!on) return err('passkeys_disabled');
  return relyingParty({ name: project.name, settings: project.settings });
}

/** Hands out a challenge for one ceremony: random, stored as its hash, 5 minutes, single use. */
export async function issueChallenge(
  deps: Pick<PasskeyDeps, 'challenges' | 'crypto' | 'clock'>,
  project: Project,
  rp: RelyingParty,
  ceremony: PasskeyCeremony,
  bound: { userId?: string | null; mfaChallengeId?: string | null; enrollmentChallengeId?: string | null } = {},
): Promise<string> {
  const challenge = deps.crypto.randomToken(32);
  const now = deps.clock.now();
  const record: PasskeyChallengeRecord = {
    id: deps.crypto.uuid(),
    projectId: project.id,
    ceremony,
    userId: bound.userId ?? null,
    mfaChallengeId: bound.mfaChallengeId ?? null,
    enrollmentChallengeId: bound.enrollmentChallengeId ?? null,
    userVerification: rp.userVerification,
    createdAt: now,
    expiresAt: new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_SECONDS * 1000),
  };
  await deps.challenges.insert(record, deps.crypto.hash(challenge));
  return challenge;
}

/**
 * Spends the challenge the browser signed, for this project and ceremony: the one statement that
 * makes every challenge single use (50 parallel answers to one challenge: one gets it).
 */
export async function takeChallenge(
  deps: Pick<PasskeyDeps, 'challenges' | 'ceremonies' | 'crypto' | 'clock'>,
  project: Project,
  ceremony: PasskeyCeremony,
  response: { response: { clientDataJSON: string } },
): Promise<{ record: PasskeyChallengeRecord; challenge: string } | null> {
  const challenge = deps.ceremonies.challengeOf(response);
  if (challenge === null) return null;
  const record = await deps.challenges.consume(project.id, ceremony, deps.crypto.hash(challenge), deps.clock.now());
  return record ? { record, challenge } : null;
}

/** What the browser's answer is checked against. */
export const expectedCeremony = (rp: RelyingParty, taken: { record: PasskeyChallengeRecord; challenge: string }): ExpectedCeremony => ({
  challenge: taken.challenge,
  origins: rp.origins,
  rpId: rp.id,
  requireUserVerification: taken.record.userVerification === 'required',
});

export const ceremonyTimeoutMs = PASSKEY_CEREMONY_TIMEOUT_MS;

/** The credentials to list in options (allow or exclude). */
export const descriptors = (passkeys: Passkey[]) => passkeys.map((p) => ({ id: p.credentialId, transports: p.transports }));

/** The refusal a verification gave, with what the library said (kept in the audit entry, not in the answer). */
export const VERIFICATION_FAILED = 'passkey_verification_failed' as const;

export { ok, err };
