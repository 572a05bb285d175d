import { describe, expect, it } from 'vitest';
import type { MfaMethod, MfaPolicy } from '../../domain/mfa';
import { err, ok } from '../../domain/result';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeBox,
  fakeCrypto,
  fakeNotify,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  strictFn,
  TEST_ORIGIN,
} from '../testing/fakes';
import type { MfaActor } from './actor';
import { makeConfirmTotpSetup } from './confirm-totp-setup';
import { ChallengeAlreadyConsumed, type FinishedSignIn } from './finish-challenge';
import { makeGenerateBackupCodes } from './generate-backup-codes';
import type { BackupCodeStore, MfaChallengeRecord, MfaChallengeStore, TotpFactor, TotpStore } from './mfa.store';
import type { QrCodeRenderer, TotpAuthenticator } from './ports';
import { makeSetupTotp } from './setup-totp';

const actor = (policy: MfaPolicy = 'optional', methods: MfaMethod[] = ['totp', 'sms'], over: Partial<MfaActor> = {}): MfaActor => ({
  project: aProject({ settings: { mfaPolicy: policy, mfaMethods: methods } }),
  user: aUser(),
  enrollmentChallengeId: null,
  origin: TEST_ORIGIN,
  sessionId: 'session-1',
  ...over,
});

describe('start TOTP enrollment', () => {
  function setup(saved = true) {
    const log = new CallLog();
    const clock = new FixedClock();
    const setupTotp = makeSetupTotp({
      totp: strictFake<Pick<TotpStore, 'savePending'>>('totp', { savePending: async () => saved }, log),
      authenticator: strictFake<Pick<TotpAuthenticator, 'generateSecret' | 'keyUri'>>(
        'authenticator',
        { generateSecret: () => 'JBSWY3DP', keyUri: (i) => `otpauth://totp/${i.issuer}:${i.label}?secret=${i.secret}&issuer=${i.issuer}` },
        log,
      ),
      qr: strictFake<QrCodeRenderer>('qr', { toDataUri: async (text) => `data:image/png;base64,QR(${text})` }, log),
      box: fakeBox(),
      clock,
    });
    return { setupTotp, log, clock };
  }

  it('needs the policy on and TOTP allowed', async () => {
    const { setupTotp, log } = setup();
    expect(await setupTotp(actor('off'))).toEqual(err('mfa_disabled'));
    expect(await setupTotp(actor('optional', ['sms']))).toEqual(err('mfa_method_not_allowed'));
    expect(log.calls).toEqual([]);
  });

  it('stores the new secret encrypted and pending, and answers it with the key URI and its QR code (camelCase)', async () => {
    const { setupTotp, log, clock } = setup();
    const uri = 'otpauth://totp/Acme:ada@example.com?secret=JBSWY3DP&issuer=Acme';
    expect(await setupTotp(actor())).toEqual(ok({ secret: 'JBSWY3DP', uri, qrCode: `data:image/png;base64,QR(${uri})` }));
    expect(log.of('totp.savePending')[0]!.args).toEqual(['project-1', 'user-1', 'box(JBSWY3DP)', clock.now()]);
  });

  it('refuses when TOTP is already confirmed', async () => {
    const { setupTotp, log } = setup(false);
    expect(await setupTotp(actor())).toEqual(err('totp_already_enrolled'));
    expect(log.names('qr')).toEqual([]);
  });
});

describe('confirm TOTP enrollment', () => {
  const challenge = { id: 'ch-9', provider: 'google', ttlSeconds: null, authCodeId: null } as MfaChallengeRecord;
  function setup(
    options: { factor?: TotpFactor | null; step?: number | null; confirmed?: boolean; live?: MfaChallengeRecord | null; finishThrows?: boolean } = {},
  ) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    const finished: FinishedSignIn = { session: { token: 'jwt', refreshToken: 'rt_1', expiresAt: clock.now(), sessionId: 's' }, user: aUser() };
    const audit = fakeAuditLog();
    const confirm = makeConfirmTotpSetup({
      totp: strictFake<Pick<TotpStore, 'find' | 'confirm'>>(
        'totp',
        {
          find: async () => (options.factor === undefined ? { secretEncrypted: 'box(SECRET)', confirmedAt: null, lastUsedStep: null } : options.factor),
          confirm: async () => options.confirmed ?? true,
        },
        log,
      ),
      challenges: strictFake<Pick<MfaChallengeStore, 'findLiveById'>>(
        'challenges',
        { findLiveById: async () => (options.live === undefined ? challenge : options.live) },
        log,
      ),
      authenticator: strictFake<Pick<TotpAuthenticator, 'matchStep'>>(
        'authenticator',
        { matchStep: () => (options.step === undefined ? 77 : options.step) },
        log,
      ),
      finish: strictFn('finish', log, async () => {
        if (options.finishThrows) throw new ChallengeAlreadyConsumed();
        return finished;
      }),
      audit,
      notify: fakeNotify(log),
      box: fakeBox(),
      clock,
      uow: fakeUnitOfWork(log),
    });
    return { confirm, log, clock, finished, audit };
  }

  it('needs a pending setup; a confirmed one is already enrolled', async () => {
    expect(await setup({ factor: null }).confirm(actor(), '123456')).toEqual(err('totp_setup_not_started'));
    expect(await setup({ factor: { secretEncrypted: 'box(S)', confirmedAt: new Date(0), lastUsedStep: 1 } }).confirm(actor(), '123456')).toEqual(
      err('totp_already_enrolled'),
    );
  });

  it('a malformed or wrong code enrolls nothing', async () => {
    const malformed = setup();
    expect(await malformed.confirm(actor(), '12 34')).toEqual(err('mfa_invalid_code'));
    expect(malformed.log.names('authenticator')).toEqual([]);
    const wrong = setup({ step: null });
    expect(await wrong.confirm(actor(), '123456')).toEqual(err('mfa_invalid_code'));
    expect(wrong.log.names('totp.confirm')).toEqual([]);
    expect([...malformed.log.names('notify'), ...wrong.log.names('notify')]).toEqual([]);
    expect([...malformed.audit.entries, ...wrong.audit.entries]).toEqual([]);
  });

  it('a signed-in user: enrolls, recording the matched step as used, and gets no session', async () => {
    const { confirm, log, clock, audit } = setup();
    expect(await confirm(actor(), ' 123456 ')).toEqual(ok({ session: null }));
    expect(log.of('authenticator.matchStep')[0]!.args).toEqual(['SECRET', '123456', clock.now()]);
    expect(log.of('totp.confirm')[0]).toMatchObject({ inTransaction: true, args: ['project-1', 'user-1', 77, clock.now()] });
    expect(log.names('finish')).toEqual([]);
    // The user is told, in the transaction that enrolled the factor, and the change is recorded.
    expect(log.of('notify')[0]).toMatchObject({ inTransaction: true, args: [{ kind: 'mfa_factor_added', userId: 'user-1', method: 'totp' }] });
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'mfa.factor.added', userId: 'user-1', details: { method: 'totp' } })]);
  });

  it('with an enrollment challenge: enrolls and finishes that sign-in in the same transaction', async () => {
    const { confirm, log, finished } = setup();
    expect(await confirm(actor('required', ['totp'], { enrollmentChallengeId: 'ch-9' }), '123456')).toEqual(ok({ session: finished }));
    expect(log.of('challenges.findLiveById')[0]!.args[0]).toBe('ch-9');
    expect(log.of('finish')[0]).toMatchObject({
      inTransaction: true,
      args: [challenge, expect.anything(), expect.anything(), { method: 'enrollment', origin: TEST_ORIGIN }],
    });
  });

  it('an enrollment challenge that expired or was spent meanwhile undoes the enrollment', async () => {
    const gone = setup({ live: null });
    expect(await gone.confirm(actor('required', ['totp'], { enrollmentChallengeId: 'ch-9' }), '123456')).toEqual(err('mfa_invalid_challenge'));
    // The notice was recorded in the transaction that rolled back; nothing is in the audit log.
    expect(gone.audit.entries).toEqual([]);
    expect(await setup({ finishThrows: true }).confirm(actor('required', ['totp'], { enrollmentChallengeId: 'ch-9' }), '123456')).toEqual(
      err('mfa_invalid_challenge'),
    );
  });
});

describe('generate backup codes', () => {
  function setup(enrolled: MfaMethod[]) {
    const log = new CallLog();
    const clock = new FixedClock();
    let i = 0;
    const audit = fakeAuditLog();
    const generate = makeGenerateBackupCodes({
      backupCodes: strictFake<Pick<BackupCodeStore, 'replace'>>('backupCodes', { replace: async () => undefined }, log),
      enrollment: strictFake('enrollment', { enrolledMethods: async () => enrolled }, log),
      crypto: fakeCrypto(),
      // The second code repeats the first, so it must be drawn again.
      randomInt: (max: number) => {
        const k = i++;
        return (k < 20 ? k % 10 : k) % max;
      },
      audit,
      notify: fakeNotify(log),
      clock,
      uow: fakeUnitOfWork(log),
    });
    return { generate, log, clock, draws: () => i, audit };
  }

  it('need TOTP or SMS enrolled first (backup codes alone are not a factor)', async () => {
    const { generate, log } = setup(['backup_codes']);
    expect(await generate(actor())).toEqual(err('mfa_not_enrolled'));
    expect(log.names('backupCodes')).toEqual([]);
    expect(await setup(['totp']).generate(actor('off'))).toEqual(err('mfa_disabled'));
  });

  it('ten distinct xxxxx-xxxxx codes, shown once and stored only hashed, replacing the earlier ones', async () => {
    const { generate, log, clock, draws, audit } = setup(['sms']);
    const r = await generate(actor());
    if (!r.ok) throw new Error(r.error);
    expect(r.value.codes).toHaveLength(10);
    expect(draws()).toBe(110);
    expect(new Set(r.value.codes).size).toBe(10);
    for (const code of r.value.codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const replace = log.of('backupCodes.replace')[0]!;
    expect(replace.inTransaction).toBe(true);
    expect(replace.args[0]).toBe('project-1');
    expect(replace.args[2]).toEqual(r.value.codes.map((c) => ({ id: expect.stringMatching(/^uuid-/), hash: `h(${c})` })));
    expect(replace.args[3]).toEqual(clock.now());
    // The first set is part of enrolling: recorded, no notice.
    expect(log.names('notify')).toEqual([]);
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'mfa.backup_codes.generated', details: { count: 10, regenerated: false } })]);
    for (const code of r.value.codes) expect(JSON.stringify(audit.entries)).not.toContain(code);
  });

  it('replacing codes the user had sends the regenerated notice, in the transaction', async () => {
    const { generate, log, audit } = setup(['totp', 'backup_codes']);
    expect((await generate(actor())).ok).toBe(true);
    expect(log.of('notify')).toEqual([expect.objectContaining({ inTransaction: true, args: [{ kind: 'backup_codes_regenerated', userId: 'user-1' }] })]);
    expect(audit.entries[0]!.details).toEqual({ count: 10, regenerated: true });
  });
});
