import { type Result, err, ok } from '../result';
import { MAX_USAGE_VALUE } from './meter';

/**
 * A credit grant: `amount` units of one meter given to a subject, drawn after the plan's included
 * amount and before overage (domain/usage/balance.ts), until `expiresAt` (null: never). Granted by
 * an operator (console, CLI), a project server (its API key), or bought (a credit pack).
 */
export interface CreditGrant {
  id: string;
  projectId: string;
  subject: { kind: 'user' | 'organization'; id: string };
  meterId: string;
  amount: number;
  remaining: number;
  expiresAt: Date | null;
  reason: string;
  source: CreditSource;
  createdAt: Date;
  /** When its expiry was recorded (credits.expired sent), else null. */
  expiredAt: Date | null;
}

export const CREDIT_SOURCES = ['operator', 'api', 'purchase'] as const;
export type CreditSource = (typeof CREDIT_SOURCES)[number];
export const CREDIT_REASON_MAX_LENGTH = 200;

export type CreditGrantError = 'invalid_credit_amount' | 'invalid_credit_expiry' | 'invalid_credit_reason';

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** A grant's terms: 1 to 10^12 whole units, an expiry in the future (or none), a reason of at most 200 characters. */
export function validateCreditGrant(
  input: { amount: unknown; expiresAt?: Date | null; reason?: string | null },
  now: Date,
): Result<{ amount: number; expiresAt: Date | null; reason: string }, CreditGrantError> {
  if (typeof input.amount !== 'number' || !Number.isSafeInteger(input.amount) || input.amount < 1 || input.amount > MAX_USAGE_VALUE) {
    return err('invalid_credit_amount');
  }
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt !== null && (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() <= now.getTime())) return err('invalid_credit_expiry');
  const reason = (input.reason ?? '').trim();
  if (reason.length > CREDIT_REASON_MAX_LENGTH || CONTROL_CHARS.test(reason)) return err('invalid_credit_reason');
  return ok({ amount: input.amount, expiresAt, reason });
}
