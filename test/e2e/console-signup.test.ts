import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { see } from '../support/browser';
import type { AdminBody } from '../support/api-body';
import { consoleApi } from '../support/console-api';
import { openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';

/**
 * A hosted deployment (TOLLGATE_CONSOLE_SIGNUP=open): anyone signs up for a member account, over
 * the API and through the sign-in page's "Create an account", and creates projects of their own,
 * which nobody else's member account sees.
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];

beforeAll(async () => {
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk({ runWorker: false, env: { TOLLGATE_CONSOLE_SIGNUP: 'open' } }));
}, 120_000);
afterAll(() => walk?.close());
const { call, sessionFrom } = consoleApi(() => t);

const json = async <T = unknown>(res: Response, status: number): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
};
const signUp = (email: string, password: string) => call('/api/admin/signup', { method: 'POST', body: { email, password } });

describe('open sign-up, over the API', () => {
  it('the mode is public; a sign-up makes a member account and signs it in; a taken address or a weak password is refused', async () => {
    expect(await json(await call('/api/admin/signup'), 200)).toEqual({ signup_mode: 'open' });

    expect(await json(await signUp('not an email', 'good pass 1'), 400)).toMatchObject({ code: 'invalid_email' });
    expect(await json(await signUp('weak@example.com', 'abcdefghij'), 400)).toMatchObject({ code: 'password_missing_number' });
    const created = await signUp('Founder@Example.com', 'good pass 1');
    const session = await sessionFrom(created.clone());
    expect(((await created.json()) as { account: unknown }).account).toMatchObject({ email: 'Founder@example.com', role: 'member', totp_enabled: false });
    expect(await json(await signUp('founder@example.com', 'other pass 2'), 409)).toMatchObject({ code: 'console_email_taken' });
    // The password it chose signs it in again.
    await sessionFrom(await call('/api/admin/session', { method: 'POST', body: { email: 'founder@example.com', password: 'good pass 1' } }));

    // It creates a project of its own (the API key shown once) and sees only its projects.
    const made = await json<AdminBody<'projects', 'create', 201>>(
      await call('/api/admin/projects', { method: 'POST', body: { name: 'Founder app' }, session }),
      201,
    );
    expect(made.api_key).toMatch(/^tg_/);
    const other = await sessionFrom(await signUp('other@example.com', 'other pass 2'));
    expect((await json<AdminBody<'projects', 'list'>>(await call('/api/admin/projects', { session: other }), 200)).projects).toEqual([]);
    expect(await json(await call(`/api/admin/projects/${made.project.id}`, { session: other }), 404)).toMatchObject({ code: 'project_not_found' });
    expect((await json<AdminBody<'projects', 'list'>>(await call('/api/admin/projects', { session }), 200)).projects.map((p) => p.name)).toEqual([
      'Founder app',
    ]);
  });
});

it('in the browser: "Create an account" on the sign-in page, the password rules from the API’s schema, then a first project', async (ctx) => {
  if (!browser) return ctx.skip();
  await page.goto(`${t.baseUrl}/dashboard/`);
  await see(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await page.getByRole('button', { name: 'Create an account' }).click();
  await see(page.getByRole('heading', { name: 'Create an account' })).toBeVisible();
  await page.getByLabel('Email').fill('newcomer@example.com');
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  await see(page.getByRole('alert')).toContainText('Password must be at least 8 characters long');
  await page.getByLabel('Password').fill('newcomer pass 1');
  await page.screenshot({ path: path.join(SHOTS, 'sign-up.png'), fullPage: true });
  await page.getByRole('button', { name: 'Create account' }).click();
  await see(page.getByRole('heading', { name: 'Projects' })).toBeVisible();
  await see(page.getByText('newcomer@example.com')).toBeVisible();

  await page.getByLabel('Name').fill('Newcomer app');
  await page.getByRole('button', { name: 'Create project' }).click();
  await see(page.getByTestId('secret')).toContainText('tg_');
  await page.getByRole('button', { name: 'I have kept it' }).click();
  await see(page.getByRole('link', { name: 'Newcomer app' })).toBeVisible();
  expect(cspErrors).toEqual([]);
});
