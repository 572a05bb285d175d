import type { MfaMethod } from '../../domain/mfa';

export interface MfaChallengeRecord {
  id: string;
  projectId: string;
  userId: string;
  /** Issued under the required policy to a user with nothing enrolled: it only allows enrolling. */
  enrollment: boolean;
  /** What the session carries once the challenge is passed. */
  provider: string;
  ttlSeconds: number | null;
  authCodeId: string | null;
  /** Where the user was at the primary sign-in; the session carries it once the challenge is passed. */
  ip: string | null;
  userAgent: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface MfaChallengeStore {
  insert(record: MfaChallengeRecord, tokenHash: string): Promise<void>;
  /** An unconsumed challenge that has not expired at `now`. */
  findLive(tokenHash: string, now: Date): Promise<MfaChallengeRecord | null>;
  findLiveById(id: string, now: Date): Promise<MfaChallengeRecord | null>;
  /** Atomically marks a live challenge consumed; false when it was consumed or expired meanwhile. */
  consume(id: string, now: Date): Promise<boolean>;
}

export interface TotpFactor {
  secretEncrypted: string;
  confirmedAt: Date | null;
  lastUsedStep: number | null;
}

export interface TotpStore {
  find(projectId: string, userId: string): Promise<TotpFactor | null>;
  /** Stores a pending (unconfirmed) secret, replacing an earlier pending one; false when TOTP is already confirmed. */
  savePending(projectId: string, userId: string, secretEncrypted: string, now: Date): Promise<boolean>;
  /** Confirms the pending secret, recording `step` as used; false when there is none. */
  confirm(projectId: string, userId: string, step: number, now: Date): Promise<boolean>;
  /** Atomically records `step` as used when it is later than every step used before. */
  useStep(projectId: string, userId: string, step: number): Promise<boolean>;
  remove(projectId: string, userId: string): Promise<void>;
}

export interface BackupCodeStore {
  /** Invalidates every earlier code of the user and stores the new set (hashes). */
  replace(projectId: string, userId: string, codeHashes: { id: string; hash: string }[], now: Date): Promise<void>;
  /** Atomically consumes one valid, unused code; false when there is none with that hash. */
  consume(projectId: string, userId: string, codeHash: string, now: Date): Promise<boolean>;
  countUsable(projectId: string, userId: string): Promise<number>;
  invalidateAll(projectId: string, userId: string, now: Date): Promise<void>;
}

export type SmsCodePurpose = 'sign_in' | 'phone' | 'disable';

export interface SmsCodeRecord {
  id: string;
  projectId: string;
  userId: string;
  purpose: SmsCodePurpose;
  challengeId: string | null;
  phone: string;
  createdAt: Date;
  expiresAt: Date;
  failedAttempts: number;
}

export interface SmsStore {
  phoneOf(projectId: string, userId: string): Promise<{ phone: string | null; verified: boolean }>;
  setVerifiedPhone(projectId: string, userId: string, phone: string, now: Date): Promise<void>;
  isEnrolled(projectId: string, userId: string): Promise<boolean>;
  enroll(projectId: string, userId: string, now: Date): Promise<void>;
  unenroll(projectId: string, userId: string): Promise<void>;
  /** Stores a new code; earlier unconsumed codes of the same user, purpose and challenge stop working. */
  insertCode(record: SmsCodeRecord, codeHash: string, now: Date): Promise<void>;
  /** The latest unconsumed code of that purpose (and challenge), whatever its expiry, with its hash. */
  findLatestCode(
    projectId: string,
    userId: string,
    purpose: SmsCodePurpose,
    challengeId: string | null,
  ): Promise<(SmsCodeRecord & { codeHash: string }) | null>;
  /** Atomically consumes a code that is unexpired and under the failure limit at `now`. */
  consumeCode(id: string, now: Date, maxFailedAttempts: number): Promise<boolean>;
  /** Counts a failed attempt; returns the new count. */
  recordFailure(id: string): Promise<number>;
}

/** Which methods a user has enrolled (before the project's allowed methods are applied). */
export interface EnrolledMethodsReader {
  enrolledMethods(projectId: string, userId: string): Promise<MfaMethod[]>;
}
