import { SMS_CODE_DIGITS, SMS_CODE_TTL_SECONDS } from '../../domain/mfa';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Outbox } from '../ports/outbox';
import type { SmsCodePurpose, SmsStore } from './mfa.store';
import { SMS_OUTBOX_TOPIC, type SmsMessage } from './ports';

export interface IssueSmsCodeDeps {
  sms: Pick<SmsStore, 'insertCode'>;
  outbox: Pick<Outbox, 'enqueue'>;
  crypto: Pick<TokenCrypto, 'randomDigits' | 'hash' | 'uuid'>;
  clock: Clock;
}

/**
 * Stores a new 6-digit code (hashed, 5 minutes, replacing earlier ones of the same purpose) and
 * records the text message in the outbox. Call inside a transaction: the message leaves only if
 * the code was stored.
 */
export function makeIssueSmsCode(deps: IssueSmsCodeDeps) {
  return async (input: {
    projectId: string;
    projectName: string;
    userId: string;
    purpose: SmsCodePurpose;
    challengeId: string | null;
    phone: string;
  }): Promise<void> => {
    const code = deps.crypto.randomDigits(SMS_CODE_DIGITS);
    const now = deps.clock.now();
    await deps.sms.insertCode(
      {
        id: deps.crypto.uuid(),
        projectId: input.projectId,
        userId: input.userId,
        purpose: input.purpose,
        challengeId: input.challengeId,
        phone: input.phone,
        createdAt: now,
        expiresAt: new Date(now.getTime() + SMS_CODE_TTL_SECONDS * 1000),
        failedAttempts: 0,
      },
      deps.crypto.hash(code),
      now,
    );
    const message: SmsMessage = {
      to: input.phone,
      body: `${code} is your ${input.projectName} verification code. It expires in ${SMS_CODE_TTL_SECONDS / 60} minutes.`,
    };
    await deps.outbox.enqueue(SMS_OUTBOX_TOPIC, { ...message });
  };
}
