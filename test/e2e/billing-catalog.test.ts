import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { createSandboxShop, type SandboxCatalog, signedIn } from '../support/billing';

/**
 * The catalog over HTTP (GET /api/proxy/billing/plans and /products): who may read it (an end
 * user's access token or the project's API key) and what it lists.
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

describe('who may read the catalog (auth userOrApiKey)', () => {
  it('answers 200 with the plans and the products for an access token and for the API key', async () => {
    const user = await signedIn(t, shop.id);
    for (const client of [user.client, shop.client]) {
      const plans = await client.billing.plans();
      expect(plans.status).toBe(200);
      expect(plans.body).toEqual({ plans: expect.any(Array) });
      const products = await client.billing.products();
      expect(products.status).toBe(200);
      expect(products.body).toEqual({ products: expect.any(Array) });
    }
  });

  it('refuses a bad credential by what it looks like: a key 401 invalid_api_key, anything else 401 invalid_access_token', async () => {
    const { token } = await signedIn(t, shop.id);
    const cases: Array<[Record<string, string>, string, string | undefined]> = [
      [{}, 'invalid_access_token', 'Missing Authorization header: send Authorization: Bearer <ACCESS_TOKEN> or Bearer <API_KEY>'],
      [{ authorization: 'Basic abc' }, 'invalid_access_token', 'Authorization must be Bearer <ACCESS_TOKEN> or Bearer <API_KEY>'],
      [{ authorization: 'Bearer tg_not_a_key' }, 'invalid_api_key', undefined],
      [{ authorization: 'Bearer eyJ.not.ajwt' }, 'invalid_access_token', undefined],
      [{ authorization: `Bearer ${token.slice(0, -2)}xx` }, 'invalid_access_token', undefined],
    ];
    for (const [headers, code, hint] of cases) {
      for (const path of ['/api/proxy/billing/plans', '/api/proxy/billing/products']) {
        const res = await fetch(`${t.baseUrl}${path}`, { headers });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        const body = (await res.json()) as { code: string; hint?: string };
        expect(body.code).toBe(code);
        expect(body.hint).toBe(hint);
      }
    }
  });

  it('refuses the key of an inactive project (404 project_inactive), and an access token of it (401)', async () => {
    const inactive = await t.createProject();
    const member = await signedIn(t, inactive.id);
    await t.inContext(() => t.tollgate.admin.updateProject(inactive.id, { active: false }));
    const byKey = await inactive.client.billing.plans();
    expect(byKey.status).toBe(404);
    expect(byKey.body).toMatchObject({ code: 'project_inactive' });
    const byToken = await member.client.billing.plans();
    expect(byToken.status).toBe(401);
  });
});

describe('what the catalog lists', () => {
  it('lists the visible plans in hierarchy order with their prices, to a user and to the API key', async () => {
    const user = await signedIn(t, shop.id);
    const { pro } = catalog;
    for (const client of [user.client, shop.client]) {
      const plans = await client.billing.plans();
      expect(plans.status).toBe(200);
      if (plans.status !== 200) return;
      expect(plans.body.plans.map((p) => p.name)).toEqual(['Basic', 'Pro']);
      expect(plans.body.plans[1]).toEqual({
        id: pro.planId,
        name: 'Pro',
        description: 'For teams',
        features: ['reports', 'export', 'sso'],
        hidden: false,
        recommended: true,
        trialsEnabled: true,
        defaultTrialDays: null,
        audience: 'users',
        seatPolicy: { mode: 'automatic', countInvitations: false, removal: 'period_end' },
        usageLimits: [],
        position: 1,
        prices: [
          { id: pro.monthly, planId: pro.planId, name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month', active: true, seats: null },
          { id: pro.yearly, planId: pro.planId, name: 'Yearly', amount: 30000, currency: 'usd', interval: 'year', active: true, seats: null },
        ],
      });
    }
  });

  it('lists every plan as a product, hidden ones included, to a user and to the API key', async () => {
    const user = await signedIn(t, shop.id);
    for (const client of [user.client, shop.client]) {
      const products = await client.billing.products();
      expect(products.status === 200 && products.body.products.map((p) => [p.name, p.hidden])).toEqual([
        ['Basic', false],
        ['Pro', false],
        ['Legacy', true],
      ]);
    }
  });
});
