/**
 * Security notifications: emails that tell an end user something changed on their account, so
 * that a change they did not make does not go unnoticed. Each kind is toggled per project.
 */

export const SECURITY_NOTICE_KINDS = [
  'password_changed',
  'mfa_factor_added',
  'mfa_factor_removed',
  'backup_codes_regenerated',
  'totp_replayed',
  'new_device',
  'organization_role_changed',
  'organization_removed',
  'passkey_added',
  'passkey_removed',
] as const;
export type SecurityNoticeKind = (typeof SECURITY_NOTICE_KINDS)[number];

export const isSecurityNoticeKind = (value: string): value is SecurityNoticeKind => (SECURITY_NOTICE_KINDS as readonly string[]).includes(value);

export type SecurityNoticeSettings = Record<SecurityNoticeKind, boolean>;

/** Every kind is on for a new project except the new-device notice, which a project opts into. */
export const defaultSecurityNoticeSettings = (): SecurityNoticeSettings => ({
  password_changed: true,
  mfa_factor_added: true,
  mfa_factor_removed: true,
  backup_codes_regenerated: true,
  totp_replayed: true,
  new_device: false,
  organization_role_changed: true,
  organization_removed: true,
  passkey_added: true,
  passkey_removed: true,
});

/** The kinds about the user's membership of an organization: they name the organization (and the role). */
export const ORGANIZATION_NOTICE_KINDS = ['organization_role_changed', 'organization_removed'] as const satisfies readonly SecurityNoticeKind[];

export const isOrganizationNoticeKind = (kind: SecurityNoticeKind): boolean => (ORGANIZATION_NOTICE_KINDS as readonly string[]).includes(kind);

/** Whether a project sends this kind (a project stored before the setting, or before the kind, existed has the default). */
export const isNoticeEnabled = (settings: { securityNotifications?: Partial<SecurityNoticeSettings> }, kind: SecurityNoticeKind): boolean =>
  settings.securityNotifications?.[kind] ?? defaultSecurityNoticeSettings()[kind];

const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bChrome\/|\bCriOS\/|\bChromium\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
  [/\bokhttp\//, 'OkHttp'],
  [/\bpython-requests\/|\bPython-urllib\//, 'Python'],
  [/\bnode-fetch\b|\bundici\b|^node$/, 'Node.js'],
  [/\bGo-http-client\//, 'Go'],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/\bAndroid\b/, 'Android'],
  [/\b(iPhone|iPad|iPod)\b|\biOS\b/, 'iOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/**
 * "Firefox, Windows": the browser (or HTTP client) and operating system families a User-Agent
 * names, without versions; null when it names neither, or without a User-Agent.
 */
export function deviceSummary(userAgent: string | null): string | null {
  if (!userAgent) return null;
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  const parts = [browser, system].filter((p): p is string => p !== undefined);
  return parts.length ? parts.join(', ') : null;
}

/**
 * The network a client address belongs to, coarse enough that a home or mobile connection keeps it
 * across reconnects: the IPv4 /24 (`203.0.113.0/24`), the IPv6 /48 (`2001:db8:1::/48`); an
 * IPv4-mapped IPv6 address counts as IPv4. Anything else is kept as given.
 */
export function networkOf(ip: string): string {
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.\d{1,3}$/i.exec(ip);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0/24`;
  if (ip.includes(':')) {
    const groups = expandIpv6(ip);
    if (groups)
      return `${groups
        .slice(0, 3)
        .map((g) => g.replace(/^0+(?=.)/, ''))
        .join(':')}::/48`;
  }
  return ip;
}

function expandIpv6(ip: string): string[] | null {
  const address = ip.split('%')[0]!.toLowerCase();
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  if (halves.length === 1 && head.length !== 8) return null;
  const missing = 8 - head.length - tail.length;
  if (missing < 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  return groups.every((g) => /^[0-9a-f]{1,4}$/.test(g)) ? groups : null;
}

/**
 * What makes a device "known" to Tollgate for an end user: the browser and system families of its
 * User-Agent and the network of its address (see docs/audit.md). Hashed before it is stored.
 */
export const deviceFingerprintSource = (ip: string, userAgent: string | null): string => `${deviceSummary(userAgent) ?? '-'}|${networkOf(ip)}`;
