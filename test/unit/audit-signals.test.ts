import { describe, expect, it } from 'vitest';
import { auditEntry, userActor } from '../../application/audit/audit-log';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import type { AuditAction, AuditDetails } from '../../domain/audit';
import { auditSignals } from '../../infrastructure/metrics/audit-signals';

const PROJECT = '7d3c7a52-9f0c-4d47-8a0e-2f9c2f6f1a11';
const USER = '0b8f6f7e-3d2a-4c1b-9e8f-7a6b5c4d3e2f';

/** What the audit writer's hook counts, from the entries the use cases record. */
function counted(action: AuditAction, details: AuditDetails = {}, reason: string | null = null): string[] {
  const calls: string[] = [];
  const observe = auditSignals({
    signIn: (method, outcome) => calls.push(`signIn ${method} ${outcome}`),
    mfaChallenge: (factor, outcome) => calls.push(`mfa ${factor} ${outcome}`),
    refreshReuse: () => calls.push('refreshReuse'),
  });
  observe(auditEntry(new Date(0), PROJECT, action, { actor: userActor(USER), origin: SYSTEM_ORIGIN, details, reason }));
  return calls;
}

describe('the metrics the audit log sees', () => {
  it('counts a sign-in by its provider: a session, or a second-factor challenge', () => {
    expect(counted('user.sign_in', { provider: 'email', mfa: 'none' })).toEqual(['signIn email success']);
    expect(counted('user.sign_in', { provider: 'github', mfa: 'challenge' })).toEqual(['signIn github mfa_required']);
    expect(counted('user.sign_in', { provider: 'passkey', mfa: 'enrollment' })).toEqual(['signIn passkey mfa_required']);
  });

  it('counts a refused sign-in as a failure, or as rate limited', () => {
    expect(counted('user.sign_in.failed', { provider: 'email' }, 'invalid_credentials')).toEqual(['signIn email failure']);
    expect(counted('user.sign_in.failed', { provider: 'email' }, 'rate_limited')).toEqual(['signIn email rate_limited']);
    expect(counted('user.sign_in.failed', {}, 'account_disabled')).toEqual(['signIn other failure']);
  });

  it('counts answered MFA challenges by factor, and refresh-token reuse', () => {
    expect(counted('mfa.challenge.verified', { method: 'totp' })).toEqual(['mfa totp success']);
    expect(counted('mfa.challenge.failed', { method: 'sms' }, 'mfa_invalid_code')).toEqual(['mfa sms failure']);
    expect(counted('mfa.totp.replayed', { method: 'totp' }, 'mfa_invalid_code')).toEqual(['mfa totp replayed']);
    expect(counted('token.refresh.reused', {}, 'refresh_token_reused')).toEqual(['refreshReuse']);
  });

  it('counts nothing for the other actions', () => {
    expect(counted('mfa.challenge.issued', { provider: 'email' })).toEqual([]);
    expect(counted('token.refresh', {})).toEqual([]);
    expect(counted('user.sign_up', { provider: 'email' })).toEqual([]);
  });
});
