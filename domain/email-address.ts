import { err, ok, type Result } from './result';

/**
 * An email address in canonical form: trimmed, NFKC-normalized, domain lower-cased. Mail is only
 * ever sent to this form. `key` is the fully lower-cased address, used to look accounts up, so
 * that `Ada@Example.com` and `ada@example.com` are the same account.
 */
export interface EmailAddress {
  address: string;
  key: string;
}

const MAX_EMAIL_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;

/** Full-width and small commercial at: NFKC would fold them into a real `@`. */
const AT_LOOKALIKES = /[\uFF20\uFE6B]/;
/** Letters, marks and digits of any script, plus the RFC 5322 atext punctuation (no quotes). */
const LOCAL_ATOM = /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+$/u;
const DOMAIN_LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]{0,61}[\p{L}\p{M}\p{N}])?$/u;
const TLD = /^(?:[\p{L}\p{M}]{2,63}|xn--[a-z0-9-]{1,59})$/u;

/**
 * Validates and normalizes an address. Refused: anything but exactly one ASCII `@` in the raw
 * input (so full-width or small `@` and lists such as `a@x,b@y` fail), quoted local parts,
 * whitespace or control characters inside, IP-literal domains, and over-long parts.
 */
export function parseEmailAddress(input: string): Result<EmailAddress, 'invalid_email'> {
  const trimmed = input.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_EMAIL_LENGTH * 2) return err('invalid_email');
  // Only the ASCII @ counts; a look-alike anywhere in the raw input is refused before NFKC folds it.
  if (AT_LOOKALIKES.test(trimmed) || (trimmed.match(/@/g) ?? []).length !== 1) return err('invalid_email');
  const normalized = trimmed.normalize('NFKC');
  if ((normalized.match(/@/g) ?? []).length !== 1) return err('invalid_email');
  if (/[\s\p{C}"\\(),:;<>[\]]/u.test(normalized)) return err('invalid_email');

  const at = normalized.indexOf('@');
  const local = normalized.slice(0, at);
  const domain = normalized.slice(at + 1).toLowerCase();
  if (local.length === 0 || local.length > MAX_LOCAL_LENGTH) return err('invalid_email');
  if (local.split('.').some((atom) => !LOCAL_ATOM.test(atom))) return err('invalid_email');

  const labels = domain.split('.');
  if (labels.length < 2 || domain.length > 253) return err('invalid_email');
  if (!labels.every((l) => DOMAIN_LABEL.test(l))) return err('invalid_email');
  if (!TLD.test(labels[labels.length - 1]!)) return err('invalid_email');

  const address = `${local}@${domain}`;
  if (address.length > MAX_EMAIL_LENGTH) return err('invalid_email');
  return ok({ address, key: address.toLowerCase() });
}
