import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CliRun, killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';
import { startTestApp, type TestApp } from '../support/app';

/**
 * The passkey settings of `tollgate project update` and `project show`: the relying party derived
 * from the callback URLs until set, set and back to derived, user verification, and the refusals
 * worded from the error table.
 */

killCliProcessesAfterEach();

let app: TestApp;
let P: string;

function cli(args: string[]): Promise<CliRun> {
  return runCli(args, {
    env: { DATABASE_URL: app.database.url, TOLLGATE_SECRET_KEY: app.secretKey.toString('base64'), NODE_ENV: 'test', PUBLIC_URL: app.baseUrl },
  });
}

interface PasskeysJson {
  rpId: string | null;
  origins: string[] | null;
  userVerification: string;
  relyingParty: { id: string; origins: string[] } | null;
}

async function update(...args: string[]) {
  const r = await cli(['project', 'update', P, ...args, '--json']);
  return { ...r, json: parseCliJson<{ project: { passkeys: PasskeysJson; settings: { enabledProviders: string[]; mfaMethods: string[] } } }>(r) };
}

beforeAll(async () => {
  app = await startTestApp({ runWorker: false });
  P = (await app.createProject({ name: 'Keys', callbackUrls: ['https://app.example.com/callback', 'https://admin.app.example.com/cb'] })).id;
});

afterAll(async () => {
  await app?.close();
});

it('derives the relying party from the callback URLs, sets it, turns passkeys on, and goes back to derived', { timeout: 60_000 }, async () => {
  const shown = await cli(['project', 'show', P]);
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toMatch(/passkey RP\s+: app\.example\.com \(derived\)/);
  expect(shown.stdout).toMatch(/passkey origins : https:\/\/app\.example\.com, https:\/\/admin\.app\.example\.com \(derived\)/);

  const set = await update(
    '--enable',
    'passkey',
    '--mfa-methods',
    'totp,passkey',
    '--passkey-rp-id',
    'example.com',
    '--passkey-origins',
    'https://app.example.com,https://www.example.com',
    '--passkey-user-verification',
    'required',
  );
  expect(set.code, set.stderr).toBe(0);
  expect(set.json.project.settings.enabledProviders).toContain('passkey');
  expect(set.json.project.settings.mfaMethods).toEqual(['totp', 'passkey']);
  expect(set.json.project.passkeys).toEqual({
    rpId: 'example.com',
    origins: ['https://app.example.com', 'https://www.example.com'],
    userVerification: 'required',
    relyingParty: { id: 'example.com', origins: ['https://app.example.com', 'https://www.example.com'] },
  });

  const back = await update('--passkey-rp-id', 'derived', '--passkey-origins', 'derived');
  expect(back.code, back.stderr).toBe(0);
  expect(back.json.project.passkeys).toMatchObject({ rpId: null, origins: null, userVerification: 'required', relyingParty: { id: 'app.example.com' } });
});

it('refuses an origin outside the relying party and a bad user verification, changing nothing', { timeout: 60_000 }, async () => {
  const outside = await cli(['project', 'update', P, '--passkey-rp-id', 'example.com', '--passkey-origins', 'https://evil-example.com', '--json']);
  expect(outside.code).toBe(1);
  expect(parseCliJson(outside)).toMatchObject({ code: 'invalid_passkey_origin' });
  const uv = await cli(['project', 'update', P, '--passkey-user-verification', 'sometimes']);
  expect(uv.code).toBe(2);
  expect(uv.stderr).toContain('--passkey-user-verification must be "required" or "preferred", got "sometimes".');
  const after = await app.inContext(() => app.tollgate.admin.getProject(P));
  expect(after?.settings.passkeys?.rpId ?? null).toBeNull();
});
