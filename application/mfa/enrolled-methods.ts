import type { MfaMethod } from '../../domain/mfa';
import type { BackupCodeStore, EnrolledMethodsReader, SmsStore, TotpStore } from './mfa.store';

export interface EnrolledMethodsDeps {
  totp: Pick<TotpStore, 'find'>;
  sms: Pick<SmsStore, 'isEnrolled' | 'phoneOf'>;
  backupCodes: Pick<BackupCodeStore, 'countUsable'>;
  /** The user's passkeys: any of them is the passkey factor (where the project allows it). */
  passkeys?: { countForUser(projectId: string, userId: string): Promise<number> };
}

/**
 * A user's enrolled methods: TOTP once its setup is confirmed, SMS once enabled on a verified
 * phone, backup codes while unused ones remain, passkey while the user holds one.
 */
export function makeEnrolledMethods(deps: EnrolledMethodsDeps): EnrolledMethodsReader {
  return {
    async enrolledMethods(projectId: string, userId: string): Promise<MfaMethod[]> {
      const methods: MfaMethod[] = [];
      const totp = await deps.totp.find(projectId, userId);
      if (totp?.confirmedAt) methods.push('totp');
      if (await deps.sms.isEnrolled(projectId, userId)) {
        const phone = await deps.sms.phoneOf(projectId, userId);
        if (phone.phone && phone.verified) methods.push('sms');
      }
      if ((await deps.backupCodes.countUsable(projectId, userId)) > 0) methods.push('backup_codes');
      if (deps.passkeys && (await deps.passkeys.countForUser(projectId, userId)) > 0) methods.push('passkey');
      return methods;
    },
  };
}
