/**
 * The private-address rule of webhook delivery (SSRF guard): an address a webhook may never be sent
 * to unless private URLs are allowed. Pure parsing of IPv4 and IPv6 text, no DNS.
 */

/** An address as bytes: 4 for IPv4, 16 for IPv6. */
export type IpBytes = number[];

/** Dotted IPv4 (`10.0.0.1`), exactly four decimal parts 0..255; null otherwise. */
export function parseIpv4(text: string): IpBytes | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    bytes.push(n);
  }
  return bytes;
}

/** IPv6 text (`::1`, `fe80::1%eth0`, `::ffff:127.0.0.1`, with or without brackets); null otherwise. */
export function parseIpv6(input: string): IpBytes | null {
  let text = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  if (!text.includes(':')) return null;
  // A trailing dotted IPv4 stands for the last two groups.
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIpv4(last);
    if (!v4) return null;
    tail = v4;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    const n = parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** The address family of `text`: 4, 6, or null when it is not an IP address. */
export function ipVersion(text: string): 4 | 6 | null {
  if (parseIpv4(text)) return 4;
  if (parseIpv6(text)) return 6;
  return null;
}

interface Range {
  readonly base: IpBytes;
  readonly bits: number;
  readonly name: string;
}

const v4 = (cidr: string, name: string): Range => {
  const [base, bits] = cidr.split('/');
  return { base: parseIpv4(base!)!, bits: Number(bits), name };
};
const v6 = (cidr: string, name: string): Range => {
  const [base, bits] = cidr.split('/');
  return { base: parseIpv6(base!)!, bits: Number(bits), name };
};

/** IPv4 ranges never delivered to (RFC 1918, loopback, link-local and metadata, CGNAT, "this network", multicast, reserved). */
const PRIVATE_V4: readonly Range[] = [
  v4('0.0.0.0/8', 'this network'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'carrier-grade NAT'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.168.0.0/16', 'private'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
];

/** IPv6 ranges never delivered to; IPv4 embedded in IPv6 is checked as IPv4. */
const PRIVATE_V6: readonly Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('fc00::/7', 'unique local'),
  v6('fe80::/10', 'link-local'),
  v6('ff00::/8', 'multicast'),
];

/** Prefixes whose last 32 bits are an IPv4 address: mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d), compatible (::a.b.c.d). */
const EMBEDDING_V4: readonly Range[] = [v6('::ffff:0:0/96', 'IPv4-mapped'), v6('64:ff9b::/96', 'NAT64'), v6('::/96', 'IPv4-compatible')];

function inRange(bytes: IpBytes, range: Range): boolean {
  if (bytes.length !== range.base.length) return false;
  let bits = range.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (range.base[i]! & mask)) return false;
  }
  return true;
}

export const METADATA_ADDRESS = '169.254.169.254';

/**
 * Why an address is refused (`loopback`, `private`, `link-local`, ...), or null when it is a public
 * address. Text that is not an IP address is refused too: only resolved addresses are checked.
 */
export function privateAddressKind(address: string): string | null {
  const four = parseIpv4(address);
  if (four) {
    if (address === METADATA_ADDRESS) return 'cloud metadata';
    return PRIVATE_V4.find((r) => inRange(four, r))?.name ?? null;
  }
  const six = parseIpv6(address);
  if (!six) return 'not an IP address';
  const own = PRIVATE_V6.find((r) => inRange(six, r));
  if (own) return own.name;
  if (EMBEDDING_V4.some((r) => inRange(six, r))) {
    const embedded = six.slice(12);
    return privateAddressKind(embedded.join('.'));
  }
  return null;
}

export const isPrivateAddress = (address: string): boolean => privateAddressKind(address) !== null;
