import { err, ok, type Result } from '../result';

/**
 * A verified domain of an organization: proven by a DNS TXT record, then used to decide what
 * happens to users who sign in with an address of that domain.
 * - `none`: nothing;
 * - `suggest`: the organization is listed among the user's suggestions, and the user may join it
 *   with one click (`POST /api/proxy/organizations/:orgId/join`), with the domain's default role;
 * - `automatic`: the user becomes a member with the default role when their organizations are
 *   listed (what an organization switcher does after sign-in).
 */
export type DomainEnrollment = 'none' | 'suggest' | 'automatic';
export const DOMAIN_ENROLLMENTS: readonly DomainEnrollment[] = ['none', 'suggest', 'automatic'];

export interface VerifiedDomain {
  id: string;
  organizationId: string;
  projectId: string;
  domain: string;
  /** The value of the TXT record that proves control. */
  verificationToken: string;
  verifiedAt: Date | null;
  enrollment: DomainEnrollment;
  defaultRole: string;
  createdAt: Date;
}

/** Where the TXT record goes: `_tollgate-verification.<domain>`. */
export const verificationRecordName = (domain: string): string => `_tollgate-verification.${domain}`;
/** What it says: `tollgate-verification=<token>`. */
export const verificationRecordValue = (token: string): string => `tollgate-verification=${token}`;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Public mail providers: nobody owns them on behalf of an organization. */
const PUBLIC_MAIL_DOMAINS = [
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'yahoo.com',
  'icloud.com',
  'me.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'gmx.de',
  'mail.ru',
  'yandex.ru',
  'qq.com',
  '163.com',
];

/** A domain name: lower-cased, at least two labels, at most 253 characters, not a public mail provider. */
export function parseDomainName(input: string): Result<string, 'invalid_domain'> {
  const domain = input.trim().toLowerCase().replace(/\.$/, '');
  if (domain.length === 0 || domain.length > 253) return err('invalid_domain');
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^[0-9]+$/.test(labels[labels.length - 1]!)) return err('invalid_domain');
  if (PUBLIC_MAIL_DOMAINS.includes(domain)) return err('invalid_domain', `${domain} is a public mail provider; no organization can verify it`);
  return ok(domain);
}

/** The domain of an email key (`ada@acme.com` -> `acme.com`). */
export const domainOfEmail = (emailKey: string): string => emailKey.slice(emailKey.lastIndexOf('@') + 1);
