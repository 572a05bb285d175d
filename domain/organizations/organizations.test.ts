import { describe, expect, it } from 'vitest';
import { err, ok } from '../result';
import { readClaim, toClaim } from './claims';
import { invitationStatus } from './invitation';
import {
  ORGANIZATION_NAME_MAX_LENGTH,
  ORGANIZATION_SLUG_MAX_LENGTH,
  PUBLIC_METADATA_MAX_BYTES,
  parseImageUrl,
  parseMetadata,
  parseOrganizationName,
  parseOrganizationSlug,
  slugFromName,
} from './organization';
import { findRole, ORG_PERMISSIONS, parseRoleInput, type RoleDefinition, roleSetOf } from './roles';
import { parseDomainName } from './verified-domain';

describe('parseOrganizationName', () => {
  it('trims the name', () => {
    expect(parseOrganizationName('  Acme Corp \t')).toEqual(ok('Acme Corp'));
  });

  it('refuses an empty or blank name', () => {
    expect(parseOrganizationName('')).toEqual(err('invalid_organization_name'));
    expect(parseOrganizationName('   ')).toEqual(err('invalid_organization_name'));
  });

  it('takes 100 characters and refuses 101', () => {
    expect(parseOrganizationName('a'.repeat(ORGANIZATION_NAME_MAX_LENGTH))).toEqual(ok('a'.repeat(100)));
    expect(parseOrganizationName('a'.repeat(ORGANIZATION_NAME_MAX_LENGTH + 1))).toEqual(err('invalid_organization_name'));
  });

  it('counts the composed form: 100 letters written with combining accents still fit', () => {
    const decomposed = 'e\u0301'.repeat(100); // 200 code units, 100 characters once composed
    expect(parseOrganizationName(decomposed)).toEqual(ok('\u00e9'.repeat(100)));
  });

  it('refuses control characters inside the name (C0, DEL, C1, line and paragraph separators)', () => {
    for (const c of ['\u0000', '\n', '\u001b', '\u007f', '\u0085', '\u2028', '\u2029']) {
      expect(parseOrganizationName(`Acme${c}Corp`), JSON.stringify(c)).toEqual(err('invalid_organization_name'));
    }
  });
});

describe('parseOrganizationSlug', () => {
  it('takes lower-case letters, digits and inner single hyphens', () => {
    expect(parseOrganizationSlug('acme-corp-2')).toEqual(ok('acme-corp-2'));
    expect(parseOrganizationSlug(' acme ')).toEqual(ok('acme'));
  });

  it('refuses upper case (it does not lower-case for the caller)', () => {
    expect(parseOrganizationSlug('Acme')).toEqual(err('invalid_organization_slug'));
  });

  it('refuses a leading, trailing or double hyphen', () => {
    for (const slug of ['-acme', 'acme-', 'ac--me']) expect(parseOrganizationSlug(slug), slug).toEqual(err('invalid_organization_slug'));
  });

  it('refuses other characters', () => {
    for (const slug of ['acme_corp', 'acme.corp', 'acme corp', 'zürich']) expect(parseOrganizationSlug(slug), slug).toEqual(err('invalid_organization_slug'));
  });

  it('takes 2 to 48 characters: 1 and 49 are refused', () => {
    expect(parseOrganizationSlug('a')).toEqual(err('invalid_organization_slug'));
    expect(parseOrganizationSlug('ab')).toEqual(ok('ab'));
    expect(parseOrganizationSlug('a'.repeat(ORGANIZATION_SLUG_MAX_LENGTH))).toEqual(ok('a'.repeat(48)));
    expect(parseOrganizationSlug('a'.repeat(ORGANIZATION_SLUG_MAX_LENGTH + 1))).toEqual(err('invalid_organization_slug'));
  });

  it('refuses reserved words with their own code', () => {
    for (const slug of ['admin', 'api', 'settings', 'null']) expect(parseOrganizationSlug(slug), slug).toEqual(err('reserved_organization_slug'));
    expect(parseOrganizationSlug('admins')).toEqual(ok('admins'));
  });
});

describe('slugFromName', () => {
  it('folds accented letters to ASCII and joins words with hyphens', () => {
    expect(slugFromName('Zürich Labs')).toBe('zurich-labs');
    expect(slugFromName('  Acme Corp.  ')).toBe('acme-corp');
    expect(slugFromName('R&D -- Team #1')).toBe('r-d-team-1');
  });

  it('answers null for a name in another script (nothing usable is left)', () => {
    expect(slugFromName('東京チーム')).toBeNull();
    expect(slugFromName('Ομάδα')).toBeNull();
  });

  it('answers null when the result would be a reserved word or too short', () => {
    expect(slugFromName('Admin')).toBeNull();
    expect(slugFromName('X')).toBeNull();
  });

  it('cuts a long name to 48 characters without a trailing hyphen', () => {
    const slug = slugFromName(`${'a'.repeat(47)} b`);
    expect(slug).toBe('a'.repeat(47));
  });
});

describe('parseImageUrl', () => {
  it('takes an absolute https or http URL and answers it normalized', () => {
    expect(parseImageUrl(' https://CDN.example.com/logo.png ')).toEqual(ok('https://cdn.example.com/logo.png'));
    expect(parseImageUrl('http://localhost:3000/a.png')).toEqual(ok('http://localhost:3000/a.png'));
  });

  it('refuses other schemes, relative URLs, credentials and inner whitespace', () => {
    for (const url of [
      '',
      'ftp://example.com/a.png',
      'data:image/png;base64,AAAA',
      'javascript:alert(1)',
      '/logo.png',
      'https://u@example.com/a.png',
      'https://:p@example.com/a.png',
      'https://example.com/a b.png',
    ]) {
      expect(parseImageUrl(url), url).toEqual(err('invalid_image_url'));
    }
  });

  it('takes 2048 characters and refuses 2049', () => {
    const base = 'https://example.com/';
    expect(parseImageUrl(base + 'a'.repeat(2048 - base.length)).ok).toBe(true);
    expect(parseImageUrl(base + 'a'.repeat(2049 - base.length))).toEqual(err('invalid_image_url'));
  });
});

describe('parseMetadata', () => {
  it('answers an object as it will be stored (a JSON round trip)', () => {
    expect(parseMetadata({ plan: 'pro', seats: 3, at: new Date('2030-01-01T00:00:00.000Z'), gone: undefined }, 2048)).toEqual(
      ok({ plan: 'pro', seats: 3, at: '2030-01-01T00:00:00.000Z' }),
    );
  });

  it('refuses an array, null and scalars', () => {
    for (const value of [[], [1], null, 'x', 1, true, undefined]) expect(parseMetadata(value, 2048), JSON.stringify(value)).toEqual(err('invalid_metadata'));
  });

  it('refuses six levels of nested objects and takes five', () => {
    expect(parseMetadata({ k: { k: { k: { k: { k: {} } } } } }, 2048)).toEqual(err('invalid_metadata'));
    expect(parseMetadata({ k: { k: { k: { k: {} } } } }, 2048)).toEqual(ok({ k: { k: { k: { k: {} } } } }));
  });

  it('takes values inside the fifth level of objects', () => {
    expect(parseMetadata({ k: { k: { k: { k: { k: 1 } } } } }, 2048)).toEqual(ok({ k: { k: { k: { k: { k: 1 } } } } }));
  });

  it('counts an array as a level', () => {
    expect(parseMetadata({ k: { k: { k: { k: [{}] } } } }, 2048)).toEqual(err('invalid_metadata'));
  });

  it('counts the limit in UTF-8 bytes: exactly the limit passes, one byte over fails', () => {
    // {"a":"…"} is 8 bytes around the value; é is 2 bytes, so 1020 of them make 2048 bytes (1028 characters).
    const atLimit = { a: '\u00e9'.repeat((PUBLIC_METADATA_MAX_BYTES - 8) / 2) };
    expect(new TextEncoder().encode(JSON.stringify(atLimit)).length).toBe(PUBLIC_METADATA_MAX_BYTES);
    expect(parseMetadata(atLimit, PUBLIC_METADATA_MAX_BYTES)).toEqual(ok(atLimit));
    expect(parseMetadata({ a: `${atLimit.a}x` }, PUBLIC_METADATA_MAX_BYTES)).toEqual(err('invalid_metadata'));
    // Counted in characters, 1021 é (2050 bytes) would still look like 1029 characters.
    expect(parseMetadata({ a: `${atLimit.a}\u00e9` }, PUBLIC_METADATA_MAX_BYTES)).toEqual(err('invalid_metadata'));
  });
});

describe('roles', () => {
  const analyst: RoleDefinition = { key: 'analyst', name: 'Analyst', description: '', permissions: ['reports:read'], builtIn: false };

  it('owner holds every org: permission and every project permission any role names', () => {
    const set = roleSetOf([analyst, { key: 'member', name: 'Member', description: '', permissions: ['docs:edit'], builtIn: true }]);
    expect(findRole(set, 'owner')!.permissions).toEqual([...ORG_PERMISSIONS, 'docs:edit', 'reports:read'].sort());
  });

  it('without stored roles: owner holds the org: permissions, admin all but org:delete, member none', () => {
    const set = roleSetOf([]);
    expect(set.roles.map((r) => [r.key, r.permissions])).toEqual([
      ['owner', ['org:billing:manage', 'org:delete', 'org:members:manage', 'org:settings:manage']],
      ['admin', ['org:billing:manage', 'org:members:manage', 'org:settings:manage']],
      ['member', []],
    ]);
    expect(set.roles.every((r) => r.builtIn)).toBe(true);
  });

  it('lists owner, admin, member, then custom roles by key; a stored owner is ignored', () => {
    const zeta = { ...analyst, key: 'zeta' };
    const storedOwner = { key: 'owner', name: 'Boss', description: '', permissions: [], builtIn: true };
    const set = roleSetOf([zeta, storedOwner, analyst]);
    expect(set.roles.map((r) => r.key)).toEqual(['owner', 'admin', 'member', 'analyst', 'zeta']);
    expect(findRole(set, 'owner')!.name).toBe('Owner');
  });

  it('parseRoleInput: owner is not editable', () => {
    expect(parseRoleInput({ key: 'owner', name: 'Owner', permissions: [] })).toEqual(err('role_not_editable'));
  });

  it('parseRoleInput: refuses bad keys', () => {
    for (const key of ['', 'Analyst', '1st', '-x', 'has space', 'a:b', 'a'.repeat(33)]) {
      expect(parseRoleInput({ key, name: 'X', permissions: [] }), key).toMatchObject({ ok: false, error: 'invalid_role' });
    }
    expect(parseRoleInput({ key: 'a'.repeat(32), name: 'X', permissions: [] }).ok).toBe(true);
  });

  it('parseRoleInput: refuses a blank name', () => {
    expect(parseRoleInput({ key: 'analyst', name: '  ', permissions: [] })).toMatchObject({ ok: false, error: 'invalid_role' });
  });

  it('parseRoleInput: refuses malformed permissions and org: ones Tollgate does not define, naming the bad one', () => {
    for (const p of ['reports', 'Reports:read', 'a:b:c:d:e', 'reports:', 'reports read:x', 'org:everything', 'org:members:invite']) {
      const r = parseRoleInput({ key: 'analyst', name: 'Analyst', permissions: ['reports:read', p] });
      expect(r, p).toMatchObject({ ok: false, error: 'invalid_permission' });
      expect((r as { detail?: string }).detail, p).toContain(`"${p}"`);
    }
  });

  it('parseRoleInput: takes the org: permissions Tollgate defines and 2 to 4 parts', () => {
    const r = parseRoleInput({ key: 'analyst', name: 'Analyst', permissions: ['org:delete', 'a:b', 'a:b:c:d'] });
    expect(r.ok).toBe(true);
  });

  it('parseRoleInput: answers permissions without duplicates, sorted, and the name and description trimmed', () => {
    expect(
      parseRoleInput({ key: 'analyst', name: ' Analyst ', description: ' Reads ', permissions: ['reports:read', 'billing:view', 'reports:read'] }),
    ).toEqual(ok({ key: 'analyst', name: 'Analyst', description: 'Reads', permissions: ['billing:view', 'reports:read'], builtIn: false }));
  });

  it('parseRoleInput: admin and member are marked built-in', () => {
    expect(parseRoleInput({ key: 'admin', name: 'Admin', permissions: [] })).toMatchObject({ ok: true, value: { builtIn: true } });
  });
});

describe('invitationStatus', () => {
  const expiresAt = new Date('2030-01-08T00:00:00.000Z');

  it('a pending invitation is expired at the exact instant of its expiry, pending one millisecond before', () => {
    expect(invitationStatus({ status: 'pending', expiresAt }, new Date(expiresAt.getTime() - 1))).toBe('pending');
    expect(invitationStatus({ status: 'pending', expiresAt }, expiresAt)).toBe('expired');
  });

  it('an ended invitation keeps its status after the expiry', () => {
    for (const status of ['accepted', 'declined', 'revoked'] as const) {
      expect(invitationStatus({ status, expiresAt }, new Date('2031-01-01T00:00:00.000Z'))).toBe(status);
    }
  });
});

describe('parseDomainName', () => {
  it('lower-cases and drops a trailing dot', () => {
    expect(parseDomainName(' Acme.COM. ')).toEqual(ok('acme.com'));
    expect(parseDomainName('mail.acme.co.uk')).toEqual(ok('mail.acme.co.uk'));
  });

  it('refuses public mail providers, saying why', () => {
    for (const domain of ['gmail.com', 'Outlook.com', 'proton.me', 'gmail.com.']) {
      expect(parseDomainName(domain), domain).toMatchObject({ ok: false, error: 'invalid_domain', detail: expect.stringContaining('public mail provider') });
    }
    expect(parseDomainName('mail.gmail.com.example')).toEqual(ok('mail.gmail.com.example'));
  });

  it('refuses a numeric top-level label (an IP address), a single label and malformed labels', () => {
    for (const domain of ['192.168.0.1', 'acme.123', 'localhost', '', '.', 'acme..com', '-acme.com', 'acme-.com', 'ac_me.com', `${'a'.repeat(64)}.com`]) {
      expect(parseDomainName(domain), domain).toEqual(err('invalid_domain'));
    }
    expect(parseDomainName('123.example')).toEqual(ok('123.example'));
  });
});

describe('organization claim', () => {
  const active = { id: 'org-1', slug: 'acme', role: 'admin', permissions: ['org:members:manage', 'reports:read'] };

  it('toClaim is compact and readClaim reads it back', () => {
    const claim = toClaim(active);
    expect(claim).toEqual({ id: 'org-1', slg: 'acme', rol: 'admin', per: ['org:members:manage', 'reports:read'] });
    expect(readClaim(JSON.parse(JSON.stringify(claim)))).toEqual(claim);
  });

  it('readClaim answers null for what is not a well-formed claim', () => {
    for (const value of [null, undefined, 'org-1', 1, {}, { id: 'org-1', slg: 'acme', rol: 'admin' }, { id: 1, slg: 'acme', rol: 'admin', per: [] }]) {
      expect(readClaim(value), JSON.stringify(value)).toBeNull();
    }
  });

  it('readClaim keeps only the string permissions', () => {
    expect(readClaim({ id: 'org-1', slg: 'acme', rol: 'admin', per: ['a:b', 1, null, 'c:d'] })).toEqual({
      id: 'org-1',
      slg: 'acme',
      rol: 'admin',
      per: ['a:b', 'c:d'],
    });
  });
});
