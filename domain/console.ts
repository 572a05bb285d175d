import type { MfaPolicy } from './mfa';

/**
 * Console accounts: the people who administer a deployment in the web console, separate from any
 * project's end users. An operator sees and manages every project; a member only the projects it
 * belongs to.
 */
export const CONSOLE_ROLES = ['operator', 'member'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

export interface ConsoleAccount {
  id: string;
  /** Canonical address (see parseEmailAddress); `emailKey` is its lower-cased lookup form. */
  email: string;
  role: ConsoleRole;
  createdAt: Date;
  /** Whether signing in also takes a code from an authenticator app (TOTP, confirmed). */
  totpEnabled: boolean;
}

/**
 * A console account's authenticator app (TOTP, RFC 6238 as for end users: SHA1, 6 digits, 30 s).
 * The secret is stored encrypted; until a first code confirms it, it is pending and not asked for.
 */
export interface ConsoleTotp {
  secretEncrypted: string;
  confirmedAt: Date | null;
  /** The last time step a code was accepted for: no code of it or of an earlier step works again. */
  lastStep: number | null;
}

/** Codes that may be tried against one console account's authenticator app in 15 minutes (sign-in, link, turning it off). */
export const CONSOLE_TOTP_ATTEMPTS = { points: 10, windowMs: 15 * 60_000 } as const;

export interface ConsoleSession {
  id: string;
  accountId: string;
  createdAt: Date;
  lastSeenAt: Date;
  /** Absolute expiry: createdAt + CONSOLE_SESSION_ABSOLUTE_SECONDS. */
  expiresAt: Date;
}

/** Whether anyone may sign up for a console account (and create projects), or only those invited. */
export type ConsoleSignupMode = 'invite' | 'open';

/** A console session ends after this long without a request... */
export const CONSOLE_SESSION_IDLE_SECONDS = 12 * 3600;
/** ...and this long after sign-in, whatever happens. */
export const CONSOLE_SESSION_ABSOLUTE_SECONDS = 7 * 24 * 3600;
/** A one-time sign-in link works once, within this time. */
export const CONSOLE_SIGN_IN_LINK_TTL_SECONDS = 60 * 60;
/** An invitation to a project's console works once, within this time. */
export const CONSOLE_INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** Invitations one console account may send per hour (all projects together). */
export const CONSOLE_INVITATIONS_PER_HOUR = 20;
/** Last-seen times are written at most this often per session (a request every second writes nothing). */
export const CONSOLE_SESSION_TOUCH_SECONDS = 60;

/** Whether a session is still alive at `now`: neither idle too long nor past its absolute expiry. */
export function isConsoleSessionAlive(session: Pick<ConsoleSession, 'lastSeenAt' | 'expiresAt'>, now: Date): boolean {
  if (now.getTime() >= session.expiresAt.getTime()) return false;
  return now.getTime() - session.lastSeenAt.getTime() < CONSOLE_SESSION_IDLE_SECONDS * 1000;
}

/**
 * What a change of a project's MFA policy does to its existing users (the spec's policy-change
 * table, with the transitions it does not list worded the same way). Null when nothing changes.
 */
export function mfaPolicyChangeEffect(from: MfaPolicy, to: MfaPolicy): string | null {
  if (from === to) return null;
  const effects: Record<string, string> = {
    'off>optional': 'No impact; users opt in.',
    'off>required': 'Existing users are prompted to enroll at next sign-in.',
    'optional>required': 'Users without MFA are prompted to enroll at next sign-in; enrolled users keep MFA.',
    'required>optional': 'Enrolled users keep MFA; others are no longer forced.',
    'required>off': 'MFA disabled for all; enrollments preserved but not enforced.',
    'optional>off': 'MFA disabled for all; enrollments preserved but not enforced.',
  };
  return effects[`${from}>${to}`] ?? null;
}

/** A pending invitation to join a project's console (single use, 7 days, its token stored hashed). */
export interface ConsoleInvitation {
  id: string;
  projectId: string;
  /** Canonical address (see parseEmailAddress). */
  email: string;
  /** The account that sent it (null once that account is gone). */
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** Someone who sees a project in the console: a member through its membership, or an operator. */
export interface ConsoleProjectMember {
  accountId: string;
  email: string;
  role: ConsoleRole;
  /** When the membership began (for an operator: when the account was created). */
  since: Date;
}

/**
 * Whether `actor` may remove `target`'s membership of a project that has `memberCount` members:
 * anyone on the project may remove a member, and a member may leave, except the last member
 * leaving (operators still see the project, but nobody of its own would).
 */
export function canRemoveConsoleMember(actorId: string, targetId: string, memberCount: number): boolean {
  return !(actorId === targetId && memberCount <= 1);
}
