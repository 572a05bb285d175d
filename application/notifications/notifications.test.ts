import { describe, expect, it } from 'vitest';
import { deviceFingerprintSource, deviceSummary, networkOf } from '../../domain/security-notice';
import type { OutgoingMail } from '../mail/email-message';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { ProjectStore } from '../stores/project.store';
import { aProject, aUser, CallLog, fakeCrypto, fakeNotify, fakeOutbox, fakeUnitOfWork, FixedClock, strictFake, TEST_ORIGIN } from '../testing/fakes';
import type { UserStore } from '../stores/user.store';
import { makeDeliverSecurityNotice } from './deliver-security-notice';
import { makeCheckNewDevice, type DeviceSighting, type KnownDeviceStore } from './new-device';
import { makeNotifySecurityEvent, SECURITY_NOTICE_TOPIC, type SecurityNotice, type SecurityNoticeMail } from './security-notice';

describe('record a security notification', () => {
  function setup() {
    const log = new CallLog();
    const outbox = fakeOutbox(log);
    const notify = makeNotifySecurityEvent({ outbox, clock: new FixedClock('2030-01-01T10:00:00.000Z') });
    const uow = fakeUnitOfWork(log);
    return { notify: (input: Parameters<typeof notify>[0]) => uow.transaction(() => notify(input)), outbox };
  }

  it('records the kind, the user, when and from where; nothing when the project turned the kind off', async () => {
    const { notify, outbox } = setup();
    await notify({ project: aProject(), userId: 'user-1', kind: 'mfa_factor_added', origin: TEST_ORIGIN, method: 'totp' });
    await notify({
      project: aProject({ settings: { securityNotifications: { ...aProject().settings.securityNotifications, password_changed: false } } }),
      userId: 'user-1',
      kind: 'password_changed',
      origin: TEST_ORIGIN,
    });
    // Off by default.
    await notify({ project: aProject(), userId: 'user-1', kind: 'new_device', origin: TEST_ORIGIN });
    expect(outbox.messages).toEqual([
      {
        topic: SECURITY_NOTICE_TOPIC,
        payload: {
          kind: 'mfa_factor_added',
          projectId: 'project-1',
          userId: 'user-1',
          occurredAt: '2030-01-01T10:00:00.000Z',
          ip: '10.0.0.1',
          userAgent: TEST_ORIGIN.userAgent,
          method: 'totp',
          organizationName: null,
          role: null,
          passkeyName: null,
        } satisfies SecurityNotice,
      },
    ]);
  });

  it('an organization notice (on by default) names the organization and the role, never the address of the request that made it', async () => {
    const { notify, outbox } = setup();
    const organization = { name: 'Research', role: 'Admin' };
    await notify({ project: aProject(), userId: 'user-1', kind: 'organization_role_changed', origin: TEST_ORIGIN, organization });
    await notify({ project: aProject(), userId: 'user-1', kind: 'organization_removed', origin: TEST_ORIGIN, organization });
    // Another kind ignores an organization given by mistake.
    await notify({ project: aProject(), userId: 'user-1', kind: 'password_changed', origin: TEST_ORIGIN, organization });
    const facts = { projectId: 'project-1', userId: 'user-1', occurredAt: '2030-01-01T10:00:00.000Z', method: null, passkeyName: null };
    expect(outbox.messages.map((m) => m.payload)).toEqual([
      { ...facts, kind: 'organization_role_changed', ip: null, userAgent: null, organizationName: 'Research', role: 'Admin' },
      { ...facts, kind: 'organization_removed', ip: null, userAgent: null, organizationName: 'Research', role: null },
      { ...facts, kind: 'password_changed', ip: '10.0.0.1', userAgent: TEST_ORIGIN.userAgent, organizationName: null, role: null },
    ] satisfies SecurityNotice[]);
    // Off when the project turned it off; a project stored before the kinds existed has them on.
    const off = setup();
    const settings = aProject().settings;
    await off.notify({
      project: aProject({ settings: { securityNotifications: { ...settings.securityNotifications, organization_removed: false } } }),
      userId: 'user-1',
      kind: 'organization_removed',
      origin: TEST_ORIGIN,
      organization,
    });
    const { organization_role_changed: _changed, organization_removed: _removed, ...before } = settings.securityNotifications;
    await off.notify({
      project: aProject({ settings: { securityNotifications: before as typeof settings.securityNotifications } }),
      userId: 'user-1',
      kind: 'organization_role_changed',
      origin: TEST_ORIGIN,
      organization,
    });
    expect(off.outbox.messages.map((m) => (m.payload as SecurityNotice).kind)).toEqual(['organization_role_changed']);
  });

  it('a passkey notice (on by default) is told with the address and device of the request, like a factor added or removed', async () => {
    const { notify, outbox } = setup();
    await notify({ project: aProject(), userId: 'user-1', kind: 'passkey_added', origin: TEST_ORIGIN, passkey: { name: 'Work laptop' } });
    await notify({ project: aProject(), userId: 'user-1', kind: 'passkey_removed', origin: TEST_ORIGIN });
    // From the console or a job: no address. Another kind ignores a passkey given by mistake.
    await notify({ project: aProject(), userId: 'user-1', kind: 'passkey_removed', origin: SYSTEM_ORIGIN, passkey: { name: 'Phone' } });
    await notify({ project: aProject(), userId: 'user-1', kind: 'password_changed', origin: SYSTEM_ORIGIN, passkey: { name: 'Phone' } });
    const facts = { projectId: 'project-1', userId: 'user-1', occurredAt: '2030-01-01T10:00:00.000Z', method: null, organizationName: null, role: null };
    const request = { ip: '10.0.0.1', userAgent: TEST_ORIGIN.userAgent };
    expect(outbox.messages.map((m) => m.payload)).toEqual([
      { ...facts, ...request, kind: 'passkey_added', passkeyName: 'Work laptop' },
      { ...facts, ...request, kind: 'passkey_removed', passkeyName: null },
      { ...facts, kind: 'passkey_removed', ip: null, userAgent: null, passkeyName: 'Phone' },
      { ...facts, kind: 'password_changed', ip: null, userAgent: null, passkeyName: null },
    ] satisfies SecurityNotice[]);
    // Off when the project turned it off; a project stored before the kinds existed has them on.
    const off = setup();
    const settings = aProject().settings;
    await off.notify({
      project: aProject({ settings: { securityNotifications: { ...settings.securityNotifications, passkey_added: false } } }),
      userId: 'user-1',
      kind: 'passkey_added',
      origin: TEST_ORIGIN,
    });
    const { passkey_added: _added, passkey_removed: _removed, ...before } = settings.securityNotifications;
    for (const kind of ['passkey_added', 'passkey_removed'] as const) {
      await off.notify({
        project: aProject({ settings: { securityNotifications: before as typeof settings.securityNotifications } }),
        userId: 'user-1',
        kind,
        origin: TEST_ORIGIN,
      });
    }
    expect(off.outbox.messages.map((m) => (m.payload as SecurityNotice).kind)).toEqual(['passkey_added', 'passkey_removed']);
  });

  it('a project stored before the setting existed has the defaults; work no request started shows no address', async () => {
    const { notify, outbox } = setup();
    const legacy = aProject();
    delete (legacy.settings as Partial<typeof legacy.settings>).securityNotifications;
    await notify({ project: legacy, userId: 'user-1', kind: 'password_changed', origin: SYSTEM_ORIGIN });
    await notify({ project: legacy, userId: 'user-1', kind: 'new_device', origin: TEST_ORIGIN });
    expect(outbox.messages.map((m) => m.payload)).toEqual([expect.objectContaining({ kind: 'password_changed', ip: null, userAgent: null, method: null })]);
  });
});

describe('the new-device check', () => {
  function setup(sighting: DeviceSighting) {
    const log = new CallLog();
    const check = makeCheckNewDevice({
      devices: strictFake<KnownDeviceStore>('devices', { remember: async () => sighting }, log),
      notify: fakeNotify(log),
      crypto: fakeCrypto(),
      clock: new FixedClock('2030-01-01T10:00:00.000Z'),
    });
    return { check, log };
  }
  const on = aProject({ settings: { securityNotifications: { ...aProject().settings.securityNotifications, new_device: true } } });

  it('off (the default): remembers nothing and sends nothing', async () => {
    const { check, log } = setup('new');
    expect(await check({ project: aProject(), userId: 'user-1', origin: TEST_ORIGIN })).toBe(false);
    expect(log.calls).toEqual([]);
  });

  it('on: remembers the hashed fingerprint; only a new device of a user who had one sends the notice', async () => {
    for (const [sighting, told] of [
      ['first', false],
      ['known', false],
      ['new', true],
    ] as const) {
      const { check, log } = setup(sighting);
      expect(await check({ project: on, userId: 'user-1', origin: TEST_ORIGIN })).toBe(told);
      expect(log.of('devices.remember')[0]!.args).toEqual(['project-1', 'user-1', 'h(Firefox, Linux|10.0.0.0/24)', new Date('2030-01-01T10:00:00.000Z')]);
      expect(log.names('notify')).toEqual(told ? ['notify'] : []);
    }
  });

  it('work no request started is no device', async () => {
    const { check, log } = setup('new');
    expect(await check({ project: on, userId: 'user-1', origin: SYSTEM_ORIGIN })).toBe(false);
    expect(log.calls).toEqual([]);
  });
});

describe('devices', () => {
  it('are named by browser and system families, without versions', () => {
    expect(deviceSummary('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36')).toBe(
      'Chrome, Windows',
    );
    expect(deviceSummary('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36 Edg/129.0.0.0')).toBe(
      'Edge, Windows',
    );
    expect(
      deviceSummary('Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'),
    ).toBe('Safari, iOS');
    expect(deviceSummary('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Mobile Safari/537.36')).toBe(
      'Chrome, Android',
    );
    expect(deviceSummary('curl/8.5.0')).toBe('curl');
    expect(deviceSummary('something else')).toBeNull();
    expect(deviceSummary(null)).toBeNull();
  });

  it('are on a network: the IPv4 /24, the IPv6 /48, mapped IPv4 as IPv4', () => {
    expect(networkOf('203.0.113.77')).toBe('203.0.113.0/24');
    expect(networkOf('::ffff:203.0.113.77')).toBe('203.0.113.0/24');
    expect(networkOf('2001:db8:abcd:12::1')).toBe('2001:db8:abcd::/48');
    expect(networkOf('2001:db8::1')).toBe('2001:db8:0::/48');
    expect(networkOf('::1')).toBe('0:0:0::/48');
    expect(networkOf('system')).toBe('system');
    expect(deviceFingerprintSource('203.0.113.9', null)).toBe('-|203.0.113.0/24');
  });
});

describe('deliver a security notification', () => {
  const notice: SecurityNotice = {
    kind: 'password_changed',
    projectId: 'project-1',
    userId: 'user-1',
    occurredAt: '2030-01-01T10:00:00.000Z',
    ip: '203.0.113.4',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0',
    method: null,
    organizationName: null,
    role: null,
    passkeyName: null,
  };
  function setup(user = aUser({ locale: 'fi' }), project = aProject({ settings: { defaultLocale: 'ja' } })) {
    const log = new CallLog();
    const sent: OutgoingMail[] = [];
    const rendered: SecurityNoticeMail[] = [];
    const deliver = makeDeliverSecurityNotice({
      projects: strictFake<Pick<ProjectStore, 'findById'>>('projects', { findById: async () => project }, log),
      users: strictFake<Pick<UserStore, 'findById'>>('users', { findById: async () => user }, log),
      renderer: {
        renderSecurityNotice: (m) => {
          rendered.push(m);
          return { subject: 's', html: 'h', text: 't' };
        },
      },
      transport: { send: async (m) => void sent.push(m) },
    });
    return { deliver, sent, rendered };
  }

  it("writes it in the user's locale (else the project's), with when, where and the device, to the user's address", async () => {
    const { deliver, sent, rendered } = setup();
    await deliver(notice, 'msg-1');
    expect(rendered).toEqual([
      {
        kind: 'password_changed',
        locale: 'fi',
        projectName: 'Acme',
        occurredAt: new Date('2030-01-01T10:00:00.000Z'),
        ip: '203.0.113.4',
        device: 'Firefox, Linux',
        method: null,
        organizationName: null,
        role: null,
        passkeyName: null,
      },
    ]);
    expect(sent).toEqual([{ subject: 's', html: 'h', text: 't', messageId: 'msg-1', to: 'ada@example.com', secretPreview: '' }]);
    const other = setup(aUser({ locale: null }));
    await other.deliver(notice, 'msg-2');
    expect(other.rendered[0]!.locale).toBe('ja');
  });

  it('an organization notice carries the organization and the role to the renderer', async () => {
    const { deliver, rendered } = setup();
    await deliver({ ...notice, kind: 'organization_role_changed', ip: null, userAgent: null, organizationName: 'Research', role: 'Admin' }, 'msg-1');
    expect(rendered[0]).toMatchObject({ kind: 'organization_role_changed', organizationName: 'Research', role: 'Admin', ip: null, device: null });
  });

  it('a user without an email address, or gone, gets nothing', async () => {
    const { deliver, sent } = setup(aUser({ email: null }));
    await deliver(notice, 'msg-1');
    expect(sent).toEqual([]);
  });
});
