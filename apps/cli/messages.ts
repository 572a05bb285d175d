import { SUPPORTED_LOCALES, isSupportedLocale } from '../../domain/locale';
import { MFA_METHODS, MFA_POLICIES, isMfaMethod } from '../../domain/mfa';
import { validateCallbackUrl } from '../../domain/project';
import { OAUTH_PROVIDERS, PROVIDERS, isOAuthProvider, isProvider } from '../../domain/providers';
import type { ProjectChanges } from '../../application/projects/update-project';

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

/** Turns an error code returned by a use case into a clear message. */
export function useCaseError(code: string, ctx: ErrorContext = {}): CommandError {
  const c = ctx.changes ?? {};
  switch (code) {
    case 'project_not_found':
      return new CommandError(code, `Project not found: ${ctx.projectId ?? '(no id)'}.`);
    case 'api_key_not_found':
      return new CommandError(code, `No active API key ${ctx.keyId ?? ''} in project ${ctx.projectId ?? ''} (unknown or already revoked).`);
    case 'user_not_found':
      return new CommandError(code, `No user ${ctx.userId ?? ''} in project ${ctx.projectId ?? ''}.`);
    case 'invalid_project_name':
      return new CommandError(code, 'Invalid project name: it must be 1 to 100 characters (after trimming spaces).');
    case 'invalid_callback_url': {
      const bad = [...(ctx.callbackUrls ?? []), ...(c.addCallbackUrls ?? [])].find((u) => !validateCallbackUrl(u));
      return new CommandError(
        code,
        `Invalid callback URL${bad === undefined ? '' : ` "${bad}"`}: it must be an absolute http(s) URL without credentials or a #fragment.`,
      );
    }
    case 'unknown_provider': {
      const toggle = [...(c.enable ?? []), ...(c.disable ?? [])].find((p) => !isProvider(p));
      if (toggle !== undefined) return new CommandError(code, `Unknown provider "${toggle}": expected one of ${list(PROVIDERS)}.`);
      const cred = (c.providerCredentials ?? []).find((p) => !isOAuthProvider(p.provider));
      return new CommandError(
        code,
        `Unknown provider${cred ? ` "${cred.provider}"` : ''} for --provider-credentials: expected one of ${list(OAUTH_PROVIDERS)}.`,
      );
    }
    case 'invalid_mfa_policy':
      return new CommandError(code, `Invalid MFA policy "${c.mfaPolicy ?? ''}": expected one of ${list(MFA_POLICIES)}.`);
    case 'invalid_mfa_method': {
      const bad = (c.mfaMethods ?? []).find((m) => !isMfaMethod(m));
      return new CommandError(
        code,
        bad === undefined
          ? `--mfa-methods needs at least one method: a comma-separated list of ${list(MFA_METHODS)}.`
          : `Unknown MFA method "${bad}": expected a comma-separated list of ${list(MFA_METHODS)}.`,
      );
    }
    case 'unsupported_locale': {
      const value = c.defaultLocale ?? '';
      const hint = isSupportedLocale(value) ? '' : `: expected one of ${list(SUPPORTED_LOCALES)}`;
      return new CommandError(code, `Unsupported locale "${value}"${hint}.`);
    }
    default:
      return new CommandError(code, `The command failed: ${code}.`);
  }
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
