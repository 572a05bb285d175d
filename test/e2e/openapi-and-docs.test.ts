import SwaggerParser from '@apidevtools/swagger-parser';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { chromium, type Browser } from 'playwright-core';
import { contract, ERRORS } from '../../contract';
import type { RouteMetadata } from '../../contract/common';
import { startTestApp, type TestApp } from '../support/app';
import { findChromium, reportSkippedBrowserTests } from '../support/chromium';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

const flatten = (router: AppRouter): AppRoute[] => Object.values(router).flatMap((r) => (isAppRoute(r) ? [r] : flatten(r as AppRouter)));

describe('GET /api/openapi.json', () => {
  it('is a valid OpenAPI 3 document listing every contract route', async () => {
    const res = await fetch(`${t.baseUrl}/api/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toMatch(/^3\./);
    await SwaggerParser.validate(structuredClone(doc) as never);
    expect(doc.paths['/api/v1/token/verify']?.post).toBeDefined();
    for (const route of flatten(contract)) {
      const p = route.path.replace(/:(\w+)/g, '{$1}');
      expect(doc.paths[p]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
  });
});

describe('error answers in the OpenAPI document', () => {
  it('lists, for each route and error status, the enum of codes the contract declares', async () => {
    type Schema = { properties?: { code?: { enum?: string[] }; hint?: unknown }; required?: string[] };
    const doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json'?: { schema?: Schema } } }>; security?: unknown[] }>>;
    };
    for (const route of flatten(contract)) {
      const operation = doc.paths[route.path.replace(/:(\w+)/g, '{$1}')]![route.method.toLowerCase()]!;
      const errorStatuses = Object.keys(route.responses).filter((s) => Number(s) >= 400);
      expect(
        Object.keys(operation.responses)
          .filter((s) => Number(s) >= 400)
          .sort(),
        `${route.method} ${route.path}`,
      ).toEqual(errorStatuses.sort());
      for (const status of errorStatuses) {
        const schema = operation.responses[status]?.content?.['application/json']?.schema;
        const declared = (route.responses[Number(status)] as z.AnyZodObject).shape.code.options as string[];
        expect(schema?.properties?.code?.enum, `${route.method} ${route.path} ${status}`).toEqual(declared);
        for (const code of declared) expect(ERRORS[code as keyof typeof ERRORS].status).toBe(Number(status));
        expect(schema?.required).toEqual(['error', 'code']);
        expect(schema?.properties?.hint).toBeDefined();
      }
      // Every route answers malformed requests and faults; body routes 413 and 415 too, as the server does.
      expect(errorStatuses).toContain('400');
      expect(errorStatuses).toContain('500');
      if (route.method !== 'GET' && 'body' in route) expect(errorStatuses).toEqual(expect.arrayContaining(['413', '415']));
      const auth = (route.metadata as RouteMetadata).auth;
      const security = {
        apiKey: [{ apiKey: [] }],
        user: [{ accessToken: [] }],
        userOrApiKey: [{ accessToken: [] }, { apiKey: [] }],
        console: [{ consoleSession: [] }],
        none: [],
      }[auth];
      expect(operation.security, `${route.method} ${route.path}`).toEqual(security);
    }
  });
});

describe('GET /docs', () => {
  it('serves the API reference page and its bundle from this server (no CDN)', async () => {
    const page = await fetch(`${t.baseUrl}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-url="/api/openapi.json"');
    // Nothing on the page talks to Scalar's hosted services: no AI agent, no developer toolbar.
    const configuration = JSON.parse(/data-configuration='([^']+)'/.exec(html)?.[1] ?? '{}');
    expect(configuration).toMatchObject({ agent: { disabled: true }, showDeveloperTools: 'never', withDefaultFonts: false });
    const scripts = [...html.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) expect(src.startsWith('/')).toBe(true);
    const bundle = await fetch(`${t.baseUrl}/docs/scalar.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toContain('javascript');
    // The one answer that may be cached: every other one is no-store (it may carry a secret).
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });
});

const CHROMIUM = findChromium();
if (!CHROMIUM) reportSkippedBrowserTests('/docs in Chromium');

describe.skipIf(!CHROMIUM)('/docs in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] });
  });
  afterAll(() => browser?.close());

  it('asks nothing of any other host (fonts included), and shows error codes as code with their underscores', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const own = new URL(t.baseUrl).host;
    const outside: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (/^(https?|wss?):$/.test(url.protocol) && url.host !== own) outside.push(request.url());
    });
    await page.goto(`${t.baseUrl}/docs#tag/token/POST/api/v1/token/verify`, { waitUntil: 'networkidle' });
    // The operation's error answers: each code in a code element, spelled as the API answers it.
    const code = page.locator('code', { hasText: /^invalid_request$/ }).first();
    await expect.poll(() => code.isVisible(), { timeout: 15_000 }).toBe(true);
    // The rendered text is what the reader sees; textContent would add hidden elements and script source.
    // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator's rendered text, not a DOM node's
    const text = await page.locator('body').innerText();
    expect(text).toContain('invalid_request');
    expect(text).not.toMatch(/\binvalid request\b/);
    // The API client of the page sends to this server, not through Scalar's proxy.
    await page
      .getByRole('button', { name: /Test Request/ })
      .first()
      .click();
    const sent = page.waitForResponse((response) => response.url() === `${t.baseUrl}/api/v1/token/verify`);
    await page
      .getByRole('button', { name: /^Send\b/ })
      .first()
      .click();
    expect((await sent).status()).toBe(401);
    await page.waitForLoadState('networkidle');
    expect(outside).toEqual([]);
    await page.close();
  });
});
