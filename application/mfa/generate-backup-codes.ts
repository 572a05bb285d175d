import { BACKUP_CODE_ALPHABET, BACKUP_CODE_COUNT, PRIMARY_MFA_METHODS } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { UnitOfWork } from '../ports/unit-of-work';
import { methodUnavailable, type MethodUnavailable, type MfaActor } from './actor';
import type { BackupCodeStore, EnrolledMethodsReader } from './mfa.store';

export interface GenerateBackupCodesDeps {
  backupCodes: Pick<BackupCodeStore, 'replace'>;
  enrollment: EnrolledMethodsReader;
  crypto: Pick<TokenCrypto, 'hash' | 'uuid'>;
  /** Uniform random integer in [0, max). */
  randomInt: (max: number) => number;
  audit: AuditLog;
  notify: NotifySecurityEvent;
  clock: Clock;
  uow: UnitOfWork;
}

/**
 * POST mfa/backup-codes/generate: 10 fresh single-use codes (`xxxxx-xxxxx`, about 49 bits each),
 * stored hashed; every earlier code stops working. They stand in for TOTP or SMS, so one of those
 * must be enrolled first.
 */
export function makeGenerateBackupCodes(deps: GenerateBackupCodesDeps) {
  const oneCode = () => {
    let s = '';
    for (let i = 0; i < 10; i++) s += BACKUP_CODE_ALPHABET[deps.randomInt(BACKUP_CODE_ALPHABET.length)];
    return `${s.slice(0, 5)}-${s.slice(5)}`;
  };
  return async (actor: MfaActor): Promise<Result<{ codes: string[] }, MethodUnavailable | 'mfa_not_enrolled'>> => {
    const unavailable = methodUnavailable(actor.project, 'backup_codes', true);
    if (unavailable) return err(unavailable);
    const enrolled = await deps.enrollment.enrolledMethods(actor.project.id, actor.user.id);
    if (!enrolled.some((m) => PRIMARY_MFA_METHODS.includes(m))) return err('mfa_not_enrolled');
    const codes = new Set<string>();
    while (codes.size < BACKUP_CODE_COUNT) codes.add(oneCode());
    const list = [...codes];
    // Replacing codes the user already had is the notice's "regenerated"; the first set is part of enrolling.
    const regenerated = enrolled.includes('backup_codes');
    await deps.uow.transaction(async () => {
      await deps.backupCodes.replace(
        actor.project.id,
        actor.user.id,
        list.map((c) => ({ id: deps.crypto.uuid(), hash: deps.crypto.hash(c) })),
        deps.clock.now(),
      );
      if (regenerated) await deps.notify({ project: actor.project, userId: actor.user.id, kind: 'backup_codes_regenerated', origin: actor.origin });
    });
    deps.audit.record(
      auditEntry(deps.clock.now(), actor.project.id, 'mfa.backup_codes.generated', {
        actor: userActor(actor.user.id),
        origin: actor.origin,
        details: { count: list.length, regenerated },
      }),
    );
    return ok({ codes: list });
  };
}
