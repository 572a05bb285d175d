/**
 * The audit log: what happened to a project's accounts and settings, by whom, from where, and how
 * it ended. Entries are written once and never changed; they hold no secret (no code, token,
 * password or key), only ids, names and reason codes.
 */

/**
 * Every action the audit log records, as a dotted name. A refusal of an action is its own name
 * ending in `.failed` (outcome `failure`, with the reason code), so `user.sign_in` as a prefix
 * finds the sign-ins and their failures together.
 */
export const AUDIT_ACTIONS = [
  // Accounts and sign-in
  'user.sign_up',
  'user.sign_in',
  'user.sign_in.failed',
  'user.identity.linked',
  // Passkeys (a refused ceremony is user.passkey.failed with its reason; a counter that went backwards, clone_detected)
  'user.passkey.added',
  'user.passkey.renamed',
  'user.passkey.removed',
  'user.passkey.failed',
  'user.passkey.clone_detected',
  // Multi-factor authentication
  'mfa.challenge.issued',
  'mfa.challenge.verified',
  'mfa.challenge.failed',
  'mfa.totp.replayed',
  'mfa.factor.added',
  'mfa.factor.removed',
  'mfa.backup_codes.generated',
  // Codes and tokens
  'token.code.issued',
  'token.code.exchange',
  'token.code.exchange.failed',
  'token.code.replayed',
  'token.refresh',
  'token.refresh.failed',
  'token.refresh.reused',
  // Revocations
  'session.revoked',
  'session.revoked.others',
  'user.sign_out_everywhere',
  'user.disabled',
  'user.enabled',
  // Passwords
  'password.reset.requested',
  'password.reset.completed',
  'password.reset.failed',
  // The operator's changes
  'project.created',
  'project.settings.changed',
  'api_key.created',
  'api_key.revoked',
  // The web console's members (docs/dashboard.md, "Members and Accounts")
  'console.member.invited',
  'console.member.removed',
  'console.invitation.accepted',
  // Billing, by the end user
  'billing.subscribe',
  'billing.subscribe.failed',
  'billing.change',
  'billing.change.failed',
  'billing.cancel',
  'billing.cancel.failed',
  'billing.pause',
  'billing.pause.failed',
  'billing.resume',
  'billing.resume.failed',
  'billing.seats',
  'billing.seats.failed',
  'billing.refund',
  'billing.credit_pack.purchased',
  // Organizations (docs/organizations.md), by a member, the project server or the console
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.switched',
  'organization.member.added',
  'organization.member.role_changed',
  'organization.member.removed',
  'organization.member.left',
  'organization.invitation.created',
  'organization.invitation.accepted',
  'organization.invitation.declined',
  'organization.invitation.revoked',
  'organization.domain.added',
  'organization.domain.verified',
  'organization.domain.updated',
  'organization.domain.removed',
  'organization.roles.changed',
  'organization.settings.changed',
  // Usage (docs/usage.md), by the console, the CLI or the project server
  'usage.meter.created',
  'usage.meter.updated',
  'usage.credits.granted',
  // The audit log itself: an export of a range (docs/audit.md, "Export")
  'audit.exported',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const isAuditAction = (value: string): value is AuditAction => (AUDIT_ACTIONS as readonly string[]).includes(value);

/**
 * An action filter: a whole dotted name or a prefix of one ending at a dot boundary (`user.sign_in`
 * finds `user.sign_in` and `user.sign_in.failed`; `billing` every billing action). Lower-case
 * letters, digits, `_` and `.` only.
 */
export const isAuditActionFilter = (value: string): boolean => /^[a-z0-9_]+(\.[a-z0-9_]+)*$/.test(value) && value.length <= 100;

/** Who did it: an end user, an operator (the CLI today, a console account later), or Tollgate itself. */
export type AuditActorKind = 'user' | 'admin' | 'system';
export interface AuditActor {
  kind: AuditActorKind;
  /**
   * The end user's id, the operator's account (`cli` for the admin CLI), `api_key:<key id>` for a
   * project server calling with its API key, or null when unknown.
   */
  id: string | null;
}

export const SYSTEM_ACTOR: AuditActor = { kind: 'system', id: null };
/** The admin CLI: an operator with shell access to the deployment, not yet a named account. */
export const CLI_ADMIN: AuditActor = { kind: 'admin', id: 'cli' };
/** An operator action whose caller did not say who they are. */
export const UNKNOWN_ADMIN: AuditActor = { kind: 'admin', id: null };

export type AuditTargetKind =
  | 'user'
  | 'project'
  | 'api_key'
  | 'session'
  | 'subscription'
  | 'email'
  | 'console_account'
  | 'console_invitation'
  | 'organization'
  | 'organization_invitation';
/** What the action was done to. */
export interface AuditTarget {
  kind: AuditTargetKind;
  id: string;
}

export type AuditOutcome = 'success' | 'failure';
export const AUDIT_OUTCOMES: readonly AuditOutcome[] = ['success', 'failure'];

/** A few facts about the action: provider, method, the settings changed. Never a secret. */
export type AuditDetails = Readonly<Record<string, string | number | boolean | null | readonly string[]>>;

/** One entry as recorded. */
export interface AuditEntry {
  at: Date;
  projectId: string;
  actor: AuditActor;
  action: AuditAction;
  target: AuditTarget | null;
  /** The end user the entry is about (the actor or the target), for "everything about this user". */
  userId: string | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  outcome: AuditOutcome;
  /** The reason code of a failure (`invalid_credentials`, `rate_limited`); null on success. */
  reason: string | null;
  details: AuditDetails;
}

/** An entry read back, with the id that orders entries of the same instant. */
export interface StoredAuditEntry extends AuditEntry {
  id: string;
}

/**
 * Detail names that could carry a secret. An entry's details never hold one by construction; this
 * list is the second line: such a key is dropped before anything is written.
 */
const SECRET_KEY = /pass(word)?|secret|token|codes?$|api_?key|private|otp|challenge$|hash/i;
const MAX_DETAIL_TEXT = 200;
const MAX_DETAILS = 20;

/**
 * The details as stored: keys that could name a secret dropped, text cut to 200 characters, at
 * most 20 entries and 20 items per list.
 */
export function safeAuditDetails(details: AuditDetails): AuditDetails {
  const out: Record<string, string | number | boolean | null | readonly string[]> = {};
  for (const [key, value] of Object.entries(details).slice(0, MAX_DETAILS)) {
    if (SECRET_KEY.test(key)) continue;
    if (typeof value === 'string') out[key] = value.slice(0, MAX_DETAIL_TEXT);
    else if (Array.isArray(value)) out[key] = value.slice(0, 20).map((v) => String(v).slice(0, MAX_DETAIL_TEXT));
    else out[key] = value as string | number | boolean | null;
  }
  return out;
}

/** The end user an entry is about: the user who acted, else the user acted upon. */
export const auditUserOf = (actor: AuditActor, target: AuditTarget | null): string | null =>
  actor.kind === 'user' && actor.id ? actor.id : target?.kind === 'user' ? target.id : null;
