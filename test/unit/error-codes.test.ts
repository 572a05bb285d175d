import { isAppRoute, type AppRoute, type AppRouter, type ClientInferResponseBody } from '@ts-rest/core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { contract } from '../../contract';
import type { RouteMetadata } from '../../contract/common';
import {
  adminErrors,
  AUTH_ERRORS,
  billingErrors,
  consoleErrors,
  authErrors,
  BODY_ROUTE_ERRORS,
  edgeErrors,
  emailErrors,
  ERRORS,
  errors,
  messageWith,
  mfaErrors,
  oauthErrors,
  passkeyErrors,
  usageErrors,
  projectGateErrors,
  QUERY_ROUTE_ERRORS,
  requestErrors,
  sessionsErrors,
  webhooksErrors,
  type ErrorEntry,
} from '../../contract/errors';
import { auditErrors } from '../../contract/errors/audit.errors';
import { organizationsErrors } from '../../contract/errors/organizations.errors';
import { overviewErrors } from '../../contract/errors/overview.errors';

const flatten = (router: AppRouter): AppRoute[] => Object.values(router).flatMap((r) => (isAppRoute(r) ? [r] : flatten(r as AppRouter)));
const routes = flatten(contract);
const name = (route: AppRoute) => `${route.method} ${route.path}`;

/** The codes a route declares, by status, read back from its zod schemas. */
function declared(route: AppRoute): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const [status, schema] of Object.entries(route.responses)) {
    if (Number(status) < 400) continue;
    const shape = (schema as z.AnyZodObject).shape as { code: z.ZodEnum<[string, ...string[]]> };
    out.set(Number(status), [...shape.code.options]);
  }
  return out;
}
const declaredCodes = (route: AppRoute) => [...declared(route).values()].flat();

describe('error tables', () => {
  it('no feature redefines a code of another (the merged table would silently keep only one)', () => {
    const tables: Record<string, Record<string, ErrorEntry>> = {
      request: requestErrors,
      edge: edgeErrors,
      auth: authErrors,
      projectGate: projectGateErrors,
      email: emailErrors,
      oauth: oauthErrors,
      mfa: mfaErrors,
      admin: adminErrors,
      audit: auditErrors,
      billing: billingErrors,
      webhooks: webhooksErrors,
      console: consoleErrors,
      sessions: sessionsErrors,
      organizations: organizationsErrors,
      passkeys: passkeyErrors,
      usage: usageErrors,
      overview: overviewErrors,
    };
    const owner = new Map<string, string>();
    const clashes: string[] = [];
    for (const [table, entries] of Object.entries(tables)) {
      for (const code of Object.keys(entries)) {
        const previous = owner.get(code);
        if (previous) clashes.push(`${code}: ${previous} and ${table}`);
        owner.set(code, table);
      }
    }
    expect(clashes).toEqual([]);
    expect([...owner.keys()].sort()).toEqual(Object.keys(ERRORS).sort());
  });

  it('every code maps to a 4xx or 5xx status and a non-empty message', () => {
    for (const [code, entry] of Object.entries(ERRORS)) {
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.status, code).toBeLessThan(600);
      expect(entry.message.length, code).toBeGreaterThan(0);
      expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
    }
  });

  it('keeps the specification messages word for word', () => {
    expect(ERRORS.invalid_api_key).toEqual({ status: 401, message: 'Invalid API key' });
    expect(ERRORS.project_inactive).toEqual({ status: 404, message: 'Project not found or inactive' });
    expect(ERRORS.callback_url_not_registered).toEqual({ status: 403, message: 'Callback URL not registered for this provider' });
    expect(ERRORS.provider_not_enabled).toEqual({ status: 403, message: 'Provider not enabled for this project' });
    expect(ERRORS.rate_limited).toEqual({ status: 429, message: 'Too many requests' });
    expect(ERRORS.missing_callback_url).toEqual({ status: 400, message: 'Missing callback_url parameter' });
    expect(ERRORS.unsupported_provider).toEqual({ status: 400, message: 'Unsupported provider' });
    expect(ERRORS.missing_code_or_state).toEqual({ status: 400, message: 'Missing code or state' });
    expect(ERRORS.invalid_state).toEqual({ status: 400, message: 'Invalid state' });
    expect(ERRORS.state_expired).toEqual({ status: 400, message: 'State expired' });
    expect(ERRORS.token_exchange_failed).toEqual({ status: 500, message: 'Token exchange failed' });
  });

  it('messageWith puts the offending value before the first colon, or at the end', () => {
    expect(messageWith('invalid_callback_url', '"ftp://x"')).toBe(
      'Invalid callback URL "ftp://x": it must be an absolute http(s) URL without credentials or a #fragment',
    );
    expect(messageWith('unknown_provider', '"myspace"', ': expected one of a, b.')).toBe('Unknown provider "myspace": expected one of a, b.');
    expect(messageWith('project_not_found')).toBe('Project not found');
  });
});

describe('errors(...) declares one schema per status its codes use', () => {
  it('groups codes by status, and declares no other status', () => {
    const responses = errors('invalid_api_key', 'invalid_access_token', 'rate_limited', 'invalid_email');
    expect(Object.keys(responses).sort()).toEqual(['400', '401', '429']);
    expect(responses[401].shape.code.options).toEqual(['invalid_api_key', 'invalid_access_token']);
    expect(responses[401].parse({ error: 'Invalid API key', code: 'invalid_api_key', hint: 'Missing Authorization header' })).toBeTruthy();
    expect(responses[401].safeParse({ error: 'x', code: 'rate_limited' }).success).toBe(false);
  });
});

describe('clients switch on codes with the compiler (checked by tsc)', () => {
  it('types each status of a route with the enum of its codes', () => {
    type Refresh401 = ClientInferResponseBody<typeof contract.session.refresh, 401>;
    expectTypeOf<Refresh401['code']>().toEqualTypeOf<'invalid_api_key' | 'invalid_refresh_token' | 'refresh_token_reused'>();
    expectTypeOf<Refresh401['hint']>().toEqualTypeOf<string | undefined>();
    type Verify404 = ClientInferResponseBody<typeof contract.token.verify, 404>;
    expectTypeOf<Verify404['code']>().toEqualTypeOf<'project_inactive'>();
    type SignUp400 = ClientInferResponseBody<typeof contract.email.signup, 400>['code'];
    expectTypeOf<'password_too_short'>().toMatchTypeOf<SignUp400>();
    expectTypeOf<'invalid_credentials'>().not.toMatchTypeOf<SignUp400>();
  });
});

describe('each route declares the codes it can answer', () => {
  it('every route declares the edge failures of its shape and the codes of its auth kind', () => {
    const missing: string[] = [];
    for (const route of routes) {
      const metadata = route.metadata as RouteMetadata;
      const shared = route.method === 'GET' || !('body' in route) ? QUERY_ROUTE_ERRORS : BODY_ROUTE_ERRORS;
      const codes = declaredCodes(route);
      for (const code of [...shared, ...AUTH_ERRORS[metadata.auth]]) if (!codes.includes(code)) missing.push(`${name(route)}: ${code}`);
    }
    expect(missing).toEqual([]);
  });

  it('each declared status lists only codes of that status, and every error status declared has codes', () => {
    for (const route of routes) {
      for (const [status, codes] of declared(route)) {
        expect(codes.length, name(route)).toBeGreaterThan(0);
        for (const code of codes) expect(ERRORS[code as keyof typeof ERRORS]?.status, `${name(route)} ${code}`).toBe(status);
      }
    }
  });

  it('every code of the table is declared by some route, except those answered outside any route', () => {
    // edgeErrors: no route matched (404, 405), /readyz; of adminErrors and consoleErrors, the CLI's alone
    // (`tollgate admin link` names an account by email).
    // `user_not_found` is the sessions routes' now.
    // Billing: what the console's billing routes do not answer: a price named with a plan it does not
    // belong to and promotion codes (the CLI's), the sandbox checkout page's (an HTML page, not a contract route),
    // and the domain's refusals for ended subscriptions, which the user routes never meet (they act
    // on the live subscription only).
    const billingOutsideRoutes = [
      ...['price_plan_mismatch', 'invalid_promotion_code', 'invalid_percent_off'],
      ...['checkout_not_found', 'checkout_not_open'],
      ...['subscription_canceled', 'subscription_incomplete'],
    ];
    // Webhooks: replaying past events is the CLI's.
    const webhooksOutsideRoutes = ['invalid_replay_since'];
    const cliOnly = ['console_account_not_found'];
    const outsideRoutes = new Set([...Object.keys(edgeErrors), ...cliOnly, ...billingOutsideRoutes, ...webhooksOutsideRoutes]);
    const used = new Set(routes.flatMap(declaredCodes));
    const undeclared = Object.keys(ERRORS).filter((code) => !used.has(code) && !outsideRoutes.has(code));
    expect(undeclared).toEqual([]);
    // ...and no route declares a code that only the edge answers.
    expect([...used].filter((code) => outsideRoutes.has(code))).toEqual([]);
  });
});
