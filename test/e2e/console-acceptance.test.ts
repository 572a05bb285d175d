import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureDashboardBuilt } from '../../apps/dashboard/build';
import { freePort } from '../../infrastructure/persistence/embedded-postgres';
import { see } from '../support/browser';
import { ROOT } from '../support/cli';
import { consolePage, launchConsoleBrowser, SHOTS } from '../support/console-browser';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * The console's acceptance, as a newcomer meets it: the server started the way `npm start` starts
 * it in development (its own process, a database with nothing in it), the one-time link it prints
 * opened in Chromium, and then, without the CLI: the Demo project is there; Google credentials are
 * configured; a plan with two prices is made; a webhook endpoint is added and its Test reaches a
 * local receiver.
 */
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-acceptance-'));
chmodSync(dataDir, 0o755);
const receiver = new WebhookReceiver(() => Date.now());
let database: TestDatabase;
let browser: Browser | null;
let server: ChildProcess | undefined;
let output = '';
let baseUrl = '';

/** Waits for a line of the server's output that matches, as it arrives. */
function printed(pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = pattern.exec(output);
      if (!found) return false;
      server!.stdout!.off('data', check);
      server!.off('exit', exited);
      resolve(found);
      return true;
    };
    const exited = () => reject(new Error(`the server exited before printing ${pattern}:\n${output}`));
    if (!check()) {
      server!.stdout!.on('data', check);
      server!.once('exit', exited);
    }
  });
}

beforeAll(async () => {
  await ensureDashboardBuilt();
  [browser, database] = await Promise.all([launchConsoleBrowser(), createTestDatabase(), receiver.start()]);
  mkdirSync(SHOTS, { recursive: true });
  if (!browser) return;
  const port = await freePort();
  baseUrl = `http://localhost:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    TOLLGATE_DATA_DIR: path.join(dataDir, 'data'),
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
  };
  for (const name of ['TOLLGATE_SECRET_KEY', 'PUBLIC_URL', 'SMTP_URL', 'TEST_DATABASE_URL']) delete env[name];
  server = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps/server/main.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
  server.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
}, 120_000);
afterAll(async () => {
  server?.kill('SIGINT');
  if (server && server.exitCode === null) await new Promise((resolve) => server!.once('exit', resolve));
  await browser?.close();
  await receiver.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

it(
  'fresh start: the printed link opens the console on the Demo project; ' +
    'Google credentials, a plan with prices and a tested webhook endpoint, all in the browser',
  async (ctx) => {
    if (!browser) return ctx.skip();
    // The link's whole line (up to its newline): the output arrives in chunks that can end inside it.
    const link = (await printed(/Web console \(one-time sign-in link[^\n]*\n\s*(http\S+)\n/))[1]!;
    expect(link).toMatch(new RegExp(`^${baseUrl}/dashboard/link#token=tgl_`));
    expect(output).toMatch(/API key\s*:\s*tg_/);

    const cspErrors: string[] = [];
    const page: Page = await consolePage(browser, cspErrors);
    await page.goto(link);
    await see(page.getByRole('heading', { name: 'Projects' }), 60_000).toBeVisible();
    await page.getByRole('link', { name: 'Demo' }).click();
    await see(page.getByRole('heading', { name: 'Demo: authentication' })).toBeVisible();

    const google = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Google' }) });
    await google.getByRole('switch').click();
    await see(page.getByRole('status').first()).toContainText('Google enabled.');
    await google.getByLabel('Client ID').fill('demo-client.apps.googleusercontent.com');
    await google.getByLabel('Client secret').fill('demo-google-secret');
    await google.getByRole('button', { name: 'Save Google credentials' }).click();
    await see(google).toContainText('Credentials are set');
    await see(page.getByTestId('redirect-google')).toHaveText(`${baseUrl}/api/proxy/callback/google`);

    // The Demo project is on the sandbox processor from its first start.
    await page.getByRole('link', { name: 'Billing' }).click();
    await see(page.getByTestId('connection-state')).toContainText('Sandbox');
    await page.getByLabel('Name', { exact: true }).last().fill('Pro');
    await page.locator('#new-plan-features').fill('sso, audit-log');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await see(page.getByRole('status').first()).toContainText('Plan Pro created');
    const prices = page.getByRole('form', { name: 'New price of Pro' });
    for (const [name, amount, interval, shown] of [
      ['Monthly', '1250', 'month', '$12.50 / month'],
      ['Yearly', '12000', 'year', '$120.00 / year'],
    ] as const) {
      // Minor units, as in the API and the CLI; the console shows the price back and asks first.
      await prices.getByLabel('Price name').fill(name);
      await prices.getByLabel('Amount (USD minor units)').fill(amount);
      await prices.getByLabel('Interval').selectOption(interval);
      await prices.getByRole('button', { name: 'Add price' }).click();
      await page
        .getByRole('group', { name: `Create ${name} at ${amount} = ${shown}?` })
        .getByRole('button', { name: 'Yes, create' })
        .click();
      await see(page.getByRole('list', { name: 'Prices of Pro' })).toContainText(shown);
    }

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await see(page.getByText('No endpoints yet')).toBeVisible();
    await page.getByLabel('URL').fill(receiver.url('/demo'));
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    receiver.route('/demo', secret, 200);
    await page.getByRole('button', { name: 'I have kept it' }).click();
    const card = page.getByRole('listitem', { name: receiver.url('/demo') });
    await card.getByRole('button', { name: `Test ${receiver.url('/demo')}` }).click();
    await see(card.getByTestId('test-outcome')).toContainText('answered 200 in ');
    await page.screenshot({ path: path.join(SHOTS, 'acceptance-webhooks.png'), fullPage: true });
    // The receiver got one request, signed with the secret the page showed.
    expect(receiver.at('/demo').map((r) => r.validFor)).toEqual([[secret]]);
    expect(cspErrors).toEqual([]);
    await page.close();
  },
);
