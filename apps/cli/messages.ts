import { SUPPORTED_LOCALES, isSupportedLocale } from '../../domain/locale';
import { MFA_METHODS, MFA_POLICIES, isMfaMethod } from '../../domain/mfa';
import { validateCallbackUrl } from '../../domain/project';
import { OAUTH_PROVIDERS, PROVIDERS, isOAuthProvider, isProvider } from '../../domain/providers';
import type { ProjectChanges } from '../../application/projects/update-project';
import { messageWith, type ErrorCode } from '../../contract/errors';

/** A failed command: its stable code (a use-case error code, or `usage`) and a message for people. */
export class CommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const list = (values: readonly string[]) => values.join(', ');

/** What the caller asked for, used to name the offending value in a message. */
export interface ErrorContext {
  projectId?: string;
  keyId?: string;
  userId?: string;
  callbackUrls?: string[];
  changes?: ProjectChanges;
}

/** The value at fault, found in what the caller asked for: put into the message, then `tail` appended. */
interface Offending {
  detail?: string;
  tail?: string;
}
const quoted = (value: string) => `"${value}"`;

/**
 * For the codes whose message can name the offending value: where to find it. The wording itself
 * is the error table's (contract/errors), shared with the HTTP API and the console.
 */
const OFFENDING: { readonly [C in ErrorCode]?: (ctx: ErrorContext) => Offending } = {
  project_not_found: (ctx) => ({ tail: `: ${ctx.projectId ?? '(no id)'}` }),
  api_key_not_found: (ctx) => ({ detail: `${ctx.keyId ?? ''} in project ${ctx.projectId ?? ''}` }),
  user_not_found: (ctx) => ({ detail: `${ctx.userId ?? ''} in project ${ctx.projectId ?? ''}` }),
  invalid_callback_url: (ctx) => {
    const bad = [...(ctx.callbackUrls ?? []), ...(ctx.changes?.addCallbackUrls ?? [])].find((u) => !validateCallbackUrl(u));
    return { detail: bad === undefined ? undefined : quoted(bad) };
  },
  unknown_provider: (ctx) => {
    const c = ctx.changes ?? {};
    const toggle = [...(c.enable ?? []), ...(c.disable ?? [])].find((p) => !isProvider(p));
    if (toggle !== undefined) return { detail: quoted(toggle), tail: `: expected one of ${list(PROVIDERS)}` };
    const cred = (c.providerCredentials ?? []).find((p) => !isOAuthProvider(p.provider));
    return { detail: `${cred ? `${quoted(cred.provider)} ` : ''}for --provider-credentials`, tail: `: expected one of ${list(OAUTH_PROVIDERS)}` };
  },
  invalid_mfa_policy: (ctx) => ({ detail: quoted(ctx.changes?.mfaPolicy ?? ''), tail: `: expected one of ${list(MFA_POLICIES)}` }),
  invalid_mfa_method: (ctx) => {
    const bad = (ctx.changes?.mfaMethods ?? []).find((m) => !isMfaMethod(m));
    return bad === undefined
      ? { tail: `: --mfa-methods needs at least one, as a comma-separated list of ${list(MFA_METHODS)}` }
      : { detail: quoted(bad), tail: `: expected a comma-separated list of ${list(MFA_METHODS)}` };
  },
  unsupported_locale: (ctx) => {
    const value = ctx.changes?.defaultLocale ?? '';
    return { detail: quoted(value), tail: isSupportedLocale(value) ? '' : `: expected one of ${list(SUPPORTED_LOCALES)}` };
  },
};

/** Turns an error code returned by a use case into its message from the error table, naming the offending value. */
export function useCaseError(code: ErrorCode, ctx: ErrorContext = {}): CommandError {
  const { detail, tail } = OFFENDING[code]?.(ctx) ?? {};
  return new CommandError(code, `${messageWith(code, detail, tail)}.`);
}

/** Explains faults that have a likely cause (no database, no schema) without leaking connection strings. */
export function describeFault(e: unknown): CommandError {
  const error = e as { code?: string; message?: string; address?: string; port?: number };
  if (error?.code === '42P01') {
    return new CommandError('not_migrated', 'The database has no Tollgate tables yet: run `tollgate migrate` first.');
  }
  if (error?.code === 'ECONNREFUSED' || error?.code === 'ENOTFOUND' || error?.code === 'ETIMEDOUT') {
    const where = error.address ? ` at ${error.address}${error.port ? `:${error.port}` : ''}` : '';
    return new CommandError('database_unavailable', `Could not connect to PostgreSQL${where} (${error.code}). Check DATABASE_URL.`);
  }
  if (error?.code === '3D000' || error?.code === '28P01' || error?.code === '28000') {
    return new CommandError('database_unavailable', `PostgreSQL refused the connection: ${error.message ?? error.code}. Check DATABASE_URL.`);
  }
  const message = error instanceof Error ? error.message : String(e);
  return new CommandError('internal_error', `Unexpected error: ${message}`);
}
