import type { Metrics } from '../../application/ports/metrics';
import type { AuditEntry } from '../../domain/audit';

const text = (value: unknown): string => (typeof value === 'string' ? value : 'other');

/**
 * The metrics the audit log already sees, counted where every use case records them (the audit
 * writer's one hook) rather than in each use case: sign-ins and their refusals, answered MFA
 * challenges, refresh-token reuse. The method and factor come from the entry's details (`provider`,
 * `method`); the metrics adapter bounds them to the known ones.
 */
export function auditSignals(metrics: Pick<Metrics, 'signIn' | 'mfaChallenge' | 'refreshReuse'>): (entry: AuditEntry) => void {
  return (entry) => {
    switch (entry.action) {
      case 'user.sign_in':
        metrics.signIn(text(entry.details.provider), entry.details.mfa === 'challenge' || entry.details.mfa === 'enrollment' ? 'mfa_required' : 'success');
        return;
      case 'user.sign_in.failed':
        metrics.signIn(text(entry.details.provider), entry.reason === 'rate_limited' ? 'rate_limited' : 'failure');
        return;
      case 'mfa.challenge.verified':
        metrics.mfaChallenge(text(entry.details.method), 'success');
        return;
      case 'mfa.challenge.failed':
        metrics.mfaChallenge(text(entry.details.method), 'failure');
        return;
      case 'mfa.totp.replayed':
        metrics.mfaChallenge(text(entry.details.method), 'replayed');
        return;
      case 'token.refresh.reused':
        metrics.refreshReuse();
        return;
    }
  };
}
