import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDashboardBuilt } from '../../apps/dashboard/build';
import { startTestApp, type TestApp } from '../support/app';
import { accessibilityViolations } from '../support/axe';
import { see } from '../support/browser';
import { consoleApi, type ConsoleSession } from '../support/console-api';
import { launchConsoleBrowser, SHOTS } from '../support/console-browser';

/**
 * The console at phone width (390 x 844, a common phone in portrait): every page, with a project
 * holding a plan with a price, a subscription, a webhook endpoint, users and audit entries. Each
 * page must not scroll sideways, its heading shows, the console navigation and the project's tabs
 * stay on screen and clickable, and nothing in the page is wider than the screen (a wide table
 * scrolls inside its own box). A full-page screenshot of each is written beside the others.
 */

// What the functions run in the page use of the browser's globals (the tests compile without the DOM library).
interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
  height: number;
}
interface PageElement {
  tagName: string;
  id: string;
  className: unknown;
  textContent: string | null;
  parentElement: PageElement | null;
  scrollLeft: number;
  scrollTop: number;
  scrollWidth: number;
  scrollHeight: number;
  clientLeft: number;
  clientTop: number;
  getBoundingClientRect(): Box;
  closest(selector: string): PageElement | null;
  matches(selector: string): boolean;
  contains(other: unknown): boolean;
}
declare const window: { innerWidth: number; scrollTo(x: number, y: number): void };
declare const document: {
  body: PageElement;
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): Iterable<PageElement>;
  createTreeWalker(root: PageElement, show: number): { nextNode(): { textContent: string | null; parentElement: PageElement | null } | null };
  createRange(): { selectNodeContents(node: unknown): void; getBoundingClientRect(): Box };
  elementFromPoint(x: number, y: number): PageElement | null;
};
declare const NodeFilter: { SHOW_TEXT: number };
declare function getComputedStyle(el: PageElement): { overflowX: string; overflowY: string; outlineStyle: string; outlineWidth: string; outlineOffset: string };
const PHONE = { width: 390, height: 844 };
let t: TestApp;
let browser: Browser | null;
let context: BrowserContext;
let page: Page;
let projectId: string;
let userId: string;
const cspErrors: string[] = [];
const { call, operator } = consoleApi(() => t);

const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.value;
};
const created = async <T>(res: Response): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body as T;
};

/** A project with something on every page, made through the admin API and the use cases. */
async function seed(op: ConsoleSession) {
  const project = await t.createProject({
    name: 'Phone-sized storefront with a rather long name',
    callbackUrls: ['https://storefront.example.com/auth/callback/with/a/long/path'],
  });
  projectId = project.id;
  const base = `/api/admin/projects/${projectId}`;
  expect((await call(`${base}/billing`, { method: 'PUT', session: op, body: { processor: 'sandbox' } })).status).toBe(200);
  const pro = (
    await created<{ plan: { id: string } }>(
      await call(`${base}/plans`, {
        method: 'POST',
        session: op,
        body: {
          name: 'Pro',
          description: 'For teams',
          features: 'sso, audit-log, export, priority-support',
          recommended: true,
          trials_enabled: true,
          default_trial_days: 14,
        },
      }),
    )
  ).plan;
  const price = (
    await created<{ price: { id: string } }>(
      await call(`${base}/plans/${pro.id}/prices`, { method: 'POST', session: op, body: { name: 'Monthly', amount: 1250, interval: 'month' } }),
    )
  ).price;
  await created(
    await call(`${base}/webhooks`, {
      method: 'POST',
      session: op,
      body: {
        url: 'http://127.0.0.1:9/hooks/tollgate/billing-events-for-the-storefront',
        description: 'Storefront billing events',
        event_types: ['invoice.paid'],
      },
    }),
  );
  await created(await call(`${base}/api-keys`, { method: 'POST', session: op, body: { label: 'storefront backend' } }));

  const ada = await t.seedUser(projectId, { email: 'ada.lovelace.with.a.long.address@storefront.example.com', name: 'Ada Lovelace' });
  userId = ada.id;
  await t.seedUser(projectId, { email: 'bea@storefront.example.com', provider: 'github' });
  await t.inContext(async () => {
    const domain = (await t.tollgate.admin.getProject(projectId))!;
    ok(
      await t.tollgate.billing.subscribe(
        { project: domain, user: ada },
        { priceId: price.id, paymentMethodId: 'pm_card_visa', requestKey: crypto.randomUUID() },
      ),
    );
  });
  expect((await call(`${base}/users/${ada.id}`, { method: 'PATCH', session: op, body: { disabled: true } })).status).toBe(200);
  expect((await call(`${base}/users/${ada.id}`, { method: 'PATCH', session: op, body: { disabled: false } })).status).toBe(200);
  // Disabling ended every session: this one starts after.
  await t.issueSession(projectId, ada, 'email', {
    ip: '2001:db8:85a3::8a2e:370:7334',
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1',
  });
  await t.tollgate.core.audit.flush();
}

/** A phone's browser: its width, touch, and zooming out to fit a page wider than the screen. */
const phoneContext = (b: Browser) => b.newContext({ viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true });
async function phonePage(c: BrowserContext) {
  const p = await c.newPage();
  p.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
  return p;
}

beforeAll(async () => {
  await ensureDashboardBuilt();
  browser = await launchConsoleBrowser();
  t = await startTestApp({ runWorker: false });
  mkdirSync(SHOTS, { recursive: true });
  if (!browser) return;
  await seed(await operator('seeder@example.com'));
  context = await phoneContext(browser);
  page = await phonePage(context);
  const account = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'phone.operator@example.com', role: 'operator' }));
  if (!account.ok) throw new Error(account.error);
  await page.goto(t.tollgate.admin.console.signInLinkUrl(account.value.link!.token));
  await page.getByRole('heading', { name: 'Projects' }).waitFor({ timeout: 30_000 });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/**
 * What overflows the phone's width: the page itself, or any element not inside a box that scrolls
 * sideways. Measured against the screen's 390 px: a phone's browser zooms out to fit a page wider
 * than the screen, and window.innerWidth then grows with it.
 */
async function overflow(p: Page) {
  return p.evaluate((width) => {
    const scrolls = (el: PageElement) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
    const clipped = (el: PageElement) => {
      for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) if (scrolls(up)) return true;
      return false;
    };
    const name = (el: PageElement) => {
      const id = el.id ? `#${el.id}` : '';
      const classes = el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
      return `${el.tagName.toLowerCase()}${id}${classes} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
    };
    // The outermost elements that overflow (their overflowing descendants are not listed again).
    const wide: string[] = [];
    const reported = new Set<PageElement>();
    for (const el of document.querySelectorAll('header, header *, main, main *')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (el.closest('.visually-hidden')) continue;
      if (!(box.right > width + 0.5 || box.left < -0.5) || clipped(el)) continue;
      reported.add(el);
      if (el.parentElement && reported.has(el.parentElement)) continue;
      wide.push(`${name(el)} spans ${Math.round(box.left)}..${Math.round(box.right)}`);
    }
    // Text running out of its box (a long address, URL or command that does not wrap).
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const owner = node.parentElement!;
      if (!node.textContent?.trim() || reported.has(owner) || owner.closest('.visually-hidden') || clipped(owner)) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const box = range.getBoundingClientRect();
      if (box.right > width + 0.5 || box.left < -0.5)
        wide.push(`the text "${node.textContent.trim().slice(0, 40)}" of ${name(owner)} spans ${Math.round(box.left)}..${Math.round(box.right)}`);
    }
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, wide };
  }, PHONE.width);
}

/** A control is reachable: shown, inside the screen's width, and not covered by something else. */
async function reachable(control: Locator) {
  await control.scrollIntoViewIfNeeded();
  expect(await control.isVisible(), `${await control.textContent()} is visible`).toBe(true);
  const box = (await control.boundingBox())!;
  const width = PHONE.width;
  expect(box.x, `${await control.textContent()} starts on screen`).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width, `${await control.textContent()} ends on screen`).toBeLessThanOrEqual(width + 0.5);
  const onTop = await control.evaluate((el: PageElement) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return !!hit && (hit === el || el.contains(hit));
  });
  expect(onTop, `${await control.textContent()} is not covered`).toBe(true);
}

/** The assertions every page makes at phone width, then its screenshot. */
async function fitsPhone(p: Page, heading: string, shot: string, navigation: { console: boolean; project: boolean }) {
  await see(p.getByRole('heading', { level: 1, name: heading, exact: true })).toBeVisible();
  const measured = await overflow(p);
  expect(measured.wide, 'elements wider than the screen').toEqual([]);
  expect(measured.innerWidth, 'the browser zoomed out to fit a page wider than the screen').toBe(PHONE.width);
  expect(measured.scrollWidth, 'the page scrolls sideways').toBeLessThanOrEqual(measured.innerWidth);
  if (navigation.console) {
    const nav = p.getByRole('navigation', { name: 'Console' });
    for (const control of await nav.locator('a, button').all()) await reachable(control);
  }
  if (navigation.project) {
    const tabs = p.getByRole('navigation', { name: 'Project' }).getByRole('link');
    await see(tabs).toHaveCount(9);
    for (const tab of await tabs.all()) await reachable(tab);
  }
  expect(await accessibilityViolations(p), 'WCAG 2.1 A/AA failures (axe-core)').toEqual([]);
  await p.evaluate(() => window.scrollTo(0, 0));
  await p.screenshot({ path: path.join(SHOTS, `phone-${shot}.png`), fullPage: true });
}

describe('the console at 390 px', () => {
  it('sign in', async (ctx) => {
    if (!browser) return ctx.skip();
    const signedOut = await phoneContext(browser);
    const visitor = await phonePage(signedOut);
    await visitor.goto(`${t.baseUrl}/dashboard/`);
    await fitsPhone(visitor, 'Sign in', 'sign-in', { console: false, project: false });
    await signedOut.close();
  });

  it('projects', async (ctx) => {
    if (!browser) return ctx.skip();
    await page.goto(`${t.baseUrl}/dashboard/`);
    await see(page.getByRole('link', { name: 'Phone-sized storefront with a rather long name' })).toBeVisible();
    await fitsPhone(page, 'Projects', 'projects', { console: true, project: false });
  });

  const projectPages: Array<[string, () => string, string]> = [
    ['authentication', () => `/projects/${projectId}`, 'Phone-sized storefront with a rather long name: authentication'],
    ['api-keys', () => `/projects/${projectId}/api-keys`, 'API keys'],
    ['billing', () => `/projects/${projectId}/billing`, 'Billing'],
    ['webhooks', () => `/projects/${projectId}/webhooks`, 'Webhooks'],
    ['members', () => `/projects/${projectId}/members`, 'Members'],
    ['users', () => `/projects/${projectId}/users`, 'Users'],
    ['user', () => `/projects/${projectId}/users/${userId}`, 'ada.lovelace.with.a.long.address@storefront.example.com'],
    ['audit', () => `/projects/${projectId}/audit`, 'Audit log'],
    ['organizations', () => `/projects/${projectId}/organizations`, 'Organizations'],
    ['organization-settings', () => `/projects/${projectId}/organization-settings`, 'Roles & settings'],
  ];
  for (const [shot, to, heading] of projectPages) {
    it(shot, async (ctx) => {
      if (!browser) return ctx.skip();
      await page.goto(`${t.baseUrl}/dashboard${to()}`);
      // Wait for the page's data, not only its heading: the measure is of the filled page.
      if (shot === 'billing') await see(page.getByRole('table', { name: 'Subscriptions' })).toBeVisible();
      if (shot === 'webhooks') await see(page.getByText('Storefront billing events')).toBeVisible();
      if (shot === 'api-keys') await see(page.getByRole('table', { name: 'API keys' })).toBeVisible();
      if (shot === 'members') await see(page.getByRole('table', { name: 'Members' })).toBeVisible();
      if (shot === 'users') await see(page.getByRole('table', { name: 'Users, newest first' }).getByRole('row')).toHaveCount(3);
      if (shot === 'user') await see(page.getByRole('table', { name: 'Live sessions, most recently used first' })).toBeVisible();
      if (shot === 'audit') await see(page.getByRole('table', { name: 'Audit entries, newest first' })).toContainText('user.disabled');
      await fitsPhone(page, heading, shot, { console: true, project: true });
    });
  }

  it('account', async (ctx) => {
    if (!browser) return ctx.skip();
    await page.goto(`${t.baseUrl}/dashboard/account`);
    await fitsPhone(page, 'Account', 'account', { console: true, project: false });
  });

  it('accounts', async (ctx) => {
    if (!browser) return ctx.skip();
    await page.goto(`${t.baseUrl}/dashboard/accounts`);
    await see(page.getByRole('table', { name: 'Console accounts' })).toContainText('phone.operator@example.com');
    await fitsPhone(page, 'Accounts', 'accounts', { console: true, project: false });
  });

  it('the project tabs and the console navigation work by touch and by keyboard, with a visible focus outline', async (ctx) => {
    if (!browser) return ctx.skip();
    await page.goto(`${t.baseUrl}/dashboard/projects/${projectId}`);
    const tabs = page.getByRole('navigation', { name: 'Project' });
    for (const [label, heading] of [
      ['API keys', 'API keys'],
      ['Billing', 'Billing'],
      ['Webhooks', 'Webhooks'],
      ['Members', 'Members'],
      ['Users', 'Users'],
      ['Audit log', 'Audit log'],
      ['Authentication', 'Phone-sized storefront with a rather long name: authentication'],
    ] as const) {
      await tabs.getByRole('link', { name: label, exact: true }).tap();
      await see(page.getByRole('heading', { level: 1, name: heading, exact: true })).toBeVisible();
      await see(tabs.getByRole('link', { name: label, exact: true })).toBeVisible();
      expect(await tabs.getByRole('link', { name: label, exact: true }).getAttribute('aria-current')).toBe('page');
    }
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Accounts' }).tap();
    await see(page.getByRole('heading', { level: 1, name: 'Accounts', exact: true })).toBeVisible();

    // Keyboard: from the heading (focused when a page opens), Tab reaches the controls with the outline showing, uncut.
    await page.goto(`${t.baseUrl}/dashboard/projects/${projectId}/users`);
    await see(page.getByRole('table', { name: 'Users, newest first' })).toBeVisible();
    const outlined = async (control: Locator) => {
      await control.focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      await see(control).toBeFocused();
      const drawn = await control.evaluate((el: PageElement) => {
        const style = getComputedStyle(el);
        const r = el.getBoundingClientRect();
        const reach = parseFloat(style.outlineWidth) + parseFloat(style.outlineOffset);
        // The outline is cut where a box that clips (overflow other than visible) ends before it:
        // the edges of what the box scrolls over, not of what it shows now.
        let cut: string | null = null;
        for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
          if (getComputedStyle(up).overflowX === 'visible' && getComputedStyle(up).overflowY === 'visible') continue;
          const b = up.getBoundingClientRect();
          const left = b.left + up.clientLeft - up.scrollLeft;
          const top = b.top + up.clientTop - up.scrollTop;
          if (r.left - reach < left || r.right + reach > left + up.scrollWidth || r.top - reach < top || r.bottom + reach > top + up.scrollHeight)
            cut = `by ${up.tagName.toLowerCase()}.${up.className}`;
        }
        return { visible: el.matches(':focus-visible'), style: style.outlineStyle, width: parseFloat(style.outlineWidth), cut };
      });
      expect(drawn, `the focus outline of ${await control.textContent()}`).toMatchObject({ visible: true, style: 'solid', cut: null });
      expect(drawn.width).toBeGreaterThanOrEqual(2);
    };
    await outlined(tabs.getByRole('link', { name: 'Audit log' }));
    await outlined(tabs.getByRole('link', { name: '← Projects' }));
    await outlined(page.getByRole('navigation', { name: 'Console' }).getByRole('button', { name: 'Sign out' }));
    await outlined(page.getByRole('table', { name: 'Users, newest first' }).getByRole('link').first());
    expect(cspErrors).toEqual([]);
  });
});
