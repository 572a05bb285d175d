import { createClient, type TollgateClient } from '../../contract';
import type { EndUser } from '../../domain/user';
import type { TestApp, TestProject } from './app';

/**
 * Fixtures of the billing end-to-end tests: a project selling on the sandbox processor, its users
 * signed in (with or without a subscription), their billing events, and raw POSTs for what the SDK
 * does not send (malformed bodies and keys, Stripe's signed webhooks).
 */

/** The value of a use case's outcome; a refusal fails the test's setup. */
export const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string; detail?: string }): T => {
  if (!outcome.ok) throw new Error(`refused: ${outcome.error} ${outcome.detail ?? ''}`);
  return outcome.value;
};

export interface RawPost {
  token?: string;
  /** The Idempotency-Key header. */
  key?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is, as application/json. */
  raw?: string;
  headers?: Record<string, string>;
}

/** A POST to `path` of the app, with a bearer token, an Idempotency-Key and a JSON body when given. */
export const post = (t: TestApp, path: string, init: RawPost = {}) =>
  fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      ...(init.token !== undefined ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.key !== undefined ? { 'idempotency-key': init.key } : {}),
      ...(init.body !== undefined || init.raw !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });

export interface SignedInUser {
  id: string;
  token: string;
  /** The SDK with the user's access token. */
  client: TollgateClient;
}

/** A new user of the project, signed in. */
export async function signedIn(t: TestApp, projectId: string, fields: Partial<EndUser> = {}): Promise<SignedInUser> {
  const seeded = await t.seedUser(projectId, fields);
  const session = await t.issueSession(projectId, seeded);
  return { id: seeded.id, token: session.token, client: createClient({ baseUrl: t.baseUrl, accessToken: session.token }) };
}

/** A new user of the project subscribed to `priceId` with pm_card_visa (the test fails if it does not answer 201). */
export async function subscribed(t: TestApp, projectId: string, priceId: string): Promise<SignedInUser & { subscriptionId: string }> {
  const user = await signedIn(t, projectId);
  const created = await user.client.billing.subscribe({ body: { priceId, paymentMethodId: 'pm_card_visa' } });
  if (created.status !== 201) throw new Error(`subscribe: ${created.status} ${JSON.stringify(created.body)}`);
  return { ...user, subscriptionId: created.body.id };
}

/** The types of the billing events recorded for the user, oldest first. */
export const billingEventTypes = async (t: TestApp, projectId: string, userId: string): Promise<string[]> =>
  ok(await t.inContext(() => t.tollgate.billing.listEvents(projectId, { limit: 100 })))
    .filter((e) => e.userId === userId)
    .reverse()
    .map((e) => e.type);

/** The catalog of a sandbox shop: Basic, Pro (trials, recommended) and the hidden Legacy, and the promotion code SAVE20. */
export interface SandboxCatalog {
  basic: { planId: string; monthly: string };
  pro: { planId: string; monthly: string; yearly: string };
  legacyPriceId: string;
}

/** The origin the shop's callback URL allows for checkout redirects. */
export const SHOP_ORIGIN = 'https://shop.example.com';

/**
 * A project connected to the sandbox processor with this catalog, in this order (the hierarchy):
 * - Basic (features reports, export): Monthly 10.00 USD;
 * - Pro (For teams; reports, export, sso; trials; recommended): Monthly 30.00, Yearly 300.00 USD;
 * - Legacy (hidden): Monthly 5.00 USD;
 * and a sandbox promotion code SAVE20 (20% off).
 */
export async function createSandboxShop(t: TestApp): Promise<{ shop: TestProject; catalog: SandboxCatalog }> {
  const shop = await t.createProject({ callbackUrls: [`${SHOP_ORIGIN}/billing/done`] });
  const billing = t.tollgate.billing;
  const catalog = await t.inContext(async () => {
    ok(await billing.connectBilling(shop.id, { processor: 'sandbox' }));
    const b = ok(await billing.createPlan(shop.id, { name: 'Basic', features: 'reports, export' }));
    const bm = ok(await billing.createPrice(shop.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
    const p = ok(
      await billing.createPlan(shop.id, {
        name: 'Pro',
        description: 'For teams',
        features: ['reports', 'export', 'sso'],
        trialsEnabled: true,
        recommended: true,
      }),
    );
    const pm = ok(await billing.createPrice(shop.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' }));
    const py = ok(await billing.createPrice(shop.id, 'Pro', { name: 'Yearly', amount: 30000, currency: 'usd', interval: 'year' }));
    ok(await billing.createPlan(shop.id, { name: 'Legacy', hidden: true }));
    const lp = ok(await billing.createPrice(shop.id, 'Legacy', { name: 'Monthly', amount: 500, currency: 'usd', interval: 'month' }));
    ok(await billing.createSandboxPromotionCode(shop.id, 'SAVE20', 20));
    return { basic: { planId: b.id, monthly: bm.id }, pro: { planId: p.id, monthly: pm.id, yearly: py.id }, legacyPriceId: lp.id };
  });
  return { shop, catalog };
}
