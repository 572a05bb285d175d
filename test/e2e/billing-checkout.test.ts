import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCheckoutPage } from '../../apps/server/http/sandbox-checkout.page';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { createSandboxShop, type SandboxCatalog, SHOP_ORIGIN, type SignedInUser, signedIn, subscribed } from '../support/billing';

/**
 * Hosted checkout over HTTP on the sandbox processor: starting one through the SDK (what it
 * refuses), and the sandbox's checkout page the user is sent to (what it shows, the cards it takes,
 * where it returns, and how it answers what it cannot use).
 */

let t: TestApp;
let shop: TestProject;
let catalog: SandboxCatalog;

beforeAll(async () => {
  t = await startTestApp();
  ({ shop, catalog } = await createSandboxShop(t));
});
afterAll(async () => {
  await t?.close();
});

const successUrl = `${SHOP_ORIGIN}/billing/done?session=1`;
const cancelUrl = `${SHOP_ORIGIN}/pricing`;

/** A checkout of Pro monthly with a 7-day trial and SAVE20. */
const proCheckout = () => ({ priceId: catalog.pro.monthly, successUrl, cancelUrl, trialDays: 7, promotionCode: 'SAVE20' });

/** Starts `proCheckout()` for `user`; answers the page's URL. */
async function startProCheckout(user: SignedInUser): Promise<string> {
  const started = await user.client.billing.checkout({ body: proCheckout() });
  if (started.status !== 200) throw new Error(`checkout: ${started.status} ${JSON.stringify(started.body)}`);
  return started.body.url;
}

/** Submits the page's form with `card`. */
const pay = (url: string, card: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ card }).toString(),
    redirect: 'manual',
  });

describe('starting a checkout', () => {
  it("answers 200 with the id and the URL of the sandbox's checkout page on this server", async () => {
    const gil = await signedIn(t, shop.id);
    const started = await gil.client.billing.checkout({ body: proCheckout() });
    expect(started.status).toBe(200);
    if (started.status !== 200) return;
    expect(started.body.url).toBe(`${t.baseUrl}/sandbox/checkout/${started.body.id}`);
  });

  /** A checkout of Pro monthly that is accepted. */
  const valid = () => ({ priceId: catalog.pro.monthly, successUrl: `${SHOP_ORIGIN}/ok`, cancelUrl: `${SHOP_ORIGIN}/no` });
  // What each case changes of it (a function: the catalog is made before the tests, after this table).
  const refusals: Array<[string, () => Record<string, unknown>, number, string]> = [
    ['a success URL of another origin', () => ({ successUrl: 'https://evil.example.com/ok' }), 400, 'redirect_url_not_allowed'],
    ['a javascript: cancel URL', () => ({ cancelUrl: 'javascript:alert(1)' }), 400, 'invalid_redirect_url'],
    ['a trial on a plan without trials', () => ({ priceId: catalog.basic.monthly, trialDays: 7 }), 400, 'trials_not_enabled'],
    ['a trial of 0 days', () => ({ trialDays: 0 }), 400, 'invalid_trial_days'],
    ['a trial of 1.5 days', () => ({ trialDays: 1.5 }), 400, 'invalid_trial_days'],
    ['an unknown promotion code', () => ({ promotionCode: 'NOPE' }), 400, 'promotion_code_not_found'],
    ['an unknown price', () => ({ priceId: crypto.randomUUID() }), 404, 'price_not_found'],
    ['a price id that is not one of ours', () => ({ priceId: 'price_123' }), 404, 'price_not_found'],
  ];
  it.each(refusals)('refuses %s', async (_case, patch, status, code) => {
    const hal = await signedIn(t, shop.id);
    const res = await hal.client.billing.checkout({ body: { ...valid(), ...patch() } as ReturnType<typeof valid> });
    expect([res.status, (res.body as { code?: string }).code], JSON.stringify(patch())).toEqual([status, code]);
  });

  it("sells a hidden plan's price by link", async () => {
    const hal = await signedIn(t, shop.id);
    expect((await hal.client.billing.checkout({ body: { ...valid(), priceId: catalog.legacyPriceId } })).status).toBe(200);
  });

  it('refuses a user with a live subscription with subscription_exists', async () => {
    const gil = await subscribed(t, shop.id, catalog.pro.monthly);
    const second = await gil.client.billing.checkout({ body: { priceId: catalog.basic.monthly, successUrl, cancelUrl } });
    expect(second.body).toMatchObject({ code: 'subscription_exists' });
  });
});

describe("the sandbox's checkout page", () => {
  it("shows the plan, the price, the trial, the promotion and the user's email escaped, with the first test card and a link to cancelUrl", async () => {
    const gil = await signedIn(t, shop.id, { email: 'gil+<b>@example.com' });
    const page = await fetch(await startProCheckout(gil));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Subscribe to Pro');
    expect(html).toContain('$30.00');
    expect(html).toContain('7 days free');
    expect(html).toContain('20% off the first invoice');
    expect(html).toContain('gil+&lt;b&gt;@example.com');
    expect(html).toContain('value="4242 4242 4242 4242"');
    expect(html).toContain(`href="${cancelUrl}"`);
  });

  it("loads nothing but its own style, and lets its form post only to itself and the project's origin (CSP)", async () => {
    const gil = await signedIn(t, shop.id);
    const page = await fetch(await startProCheckout(gil));
    const csp = page.headers.get('content-security-policy');
    const styleHash = /style-src ('sha256-[^']+')/.exec(csp ?? '')?.[1];
    expect(csp).toBe(`default-src 'none'; style-src ${styleHash}; form-action 'self' ${SHOP_ORIGIN}; frame-ancestors 'none'; base-uri 'none'`);
  });

  it('shows the page again with the error for a declined card (402), keeping the number typed, and subscribes nobody', async () => {
    const gil = await signedIn(t, shop.id);
    const declined = await pay(await startProCheckout(gil), '4000 0000 0000 0002');
    expect(declined.status).toBe(402);
    const declinedHtml = await declined.text();
    expect(declinedHtml).toMatch(/class="error" role="alert">[^<]*declined/i);
    expect(declinedHtml).toContain('value="4000 0000 0000 0002"');
    expect((await gil.client.billing.subscription()).body).toBeNull();
  });

  it('answers 400 for a number that is not a test card, and subscribes nobody', async () => {
    const gil = await signedIn(t, shop.id);
    const unknown = await pay(await startProCheckout(gil), '1234');
    expect(unknown.status).toBe(400);
    expect((await gil.client.billing.subscription()).body).toBeNull();
  });

  it('takes a test card: 303 to successUrl, and the user is trialing Pro and entitled to it', async () => {
    const gil = await signedIn(t, shop.id);
    const paid = await pay(await startProCheckout(gil), '4242 4242 4242 4242');
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(successUrl);
    expect((await gil.client.billing.subscription()).body).toMatchObject({ status: 'trialing', plan: { name: 'Pro' }, trialEnd: expect.any(String) });
    expect((await gil.client.billing.entitlements()).body).toMatchObject({ plan: 'Pro', status: 'trialing' });
  });

  it('refuses paying a completed checkout again (409) with a link to successUrl', async () => {
    const gil = await signedIn(t, shop.id);
    const url = await startProCheckout(gil);
    expect((await pay(url, '4242 4242 4242 4242')).status).toBe(303);
    const again = await pay(url, '4242 4242 4242 4242');
    expect(again.status).toBe(409);
    expect(await again.text()).toContain(`href="${successUrl}"`);
  });

  it('answers an unknown checkout with a 404 page that loads nothing, and refuses paying it (404)', async () => {
    const res = await fetch(`${t.baseUrl}/sandbox/checkout/cs_unknown`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(await res.text()).toContain('Checkout not found');
    const paid = await fetch(`${t.baseUrl}/sandbox/checkout/cs_unknown`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'card=4242424242424242',
      redirect: 'manual',
    });
    expect(paid.status).toBe(404);
  });

  it('answers a form it cannot read (too large) with a page, not a fault', async () => {
    const res = await fetch(`${t.baseUrl}/sandbox/checkout/cs_unknown`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `card=${'4'.repeat(10_000)}`,
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('text/html');
  });

  it('escapes everything it shows, fills in the first test card and loads nothing from anywhere', () => {
    const html = renderCheckoutPage(
      {
        id: 'cs_"x',
        projectId: 'p',
        status: 'open',
        planName: '<script>alert(1)</script>',
        priceName: 'Monthly & "more"',
        amount: 1999,
        quantity: null,
        currency: 'usd',
        interval: 'month',
        trialDays: 14,
        percentOff: 20,
        email: "o'hara@example.com",
        successUrl: 'https://app.example.com/ok',
        cancelUrl: 'https://app.example.com/no?a=1&b="2"',
      },
      { error: '<b>declined</b>' },
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>declined</b>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('Monthly &amp; &quot;more&quot;');
    expect(html).toContain('o&#39;hara@example.com');
    expect(html).toContain('href="https://app.example.com/no?a=1&amp;b=&quot;2&quot;"');
    expect(html).toContain('action="/sandbox/checkout/cs_%22x"');
    expect(html).toContain('value="4242 4242 4242 4242"');
    expect(html).toContain('$19.99');
    expect(html).toContain('14 days free');
    expect(html).toContain('20% off');
    // Nothing is loaded from anywhere: no scripts, stylesheets, images or fonts.
    expect(html).not.toMatch(/<script|<link|<img|src=|url\(/i);
  });
});
