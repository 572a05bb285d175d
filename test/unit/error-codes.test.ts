import { describe, expect, it } from 'vitest';
import { coreErrors } from '../../apps/server/http/errors/core.errors';
import { emailErrors } from '../../apps/server/http/errors/email.errors';
import { ERRORS } from '../../apps/server/http/errors';
import { mfaErrors } from '../../apps/server/http/errors/mfa.errors';
import { oauthErrors } from '../../apps/server/http/errors/oauth.errors';

describe('error tables', () => {
  it('no feature redefines a code of another (the merged table would silently keep only one)', () => {
    const tables = { core: coreErrors, email: emailErrors, oauth: oauthErrors, mfa: mfaErrors };
    const owner = new Map<string, string>();
    const clashes: string[] = [];
    for (const [name, table] of Object.entries(tables)) {
      for (const code of Object.keys(table)) {
        const previous = owner.get(code);
        const a = previous ? (tables as Record<string, Record<string, { status: number; message: string }>>)[previous]![code]! : null;
        const b = (table as Record<string, { status: number; message: string }>)[code]!;
        if (previous && (a!.status !== b.status || a!.message !== b.message)) clashes.push(`${code}: ${previous} vs ${name}`);
        owner.set(code, name);
      }
    }
    expect(clashes).toEqual([]);
  });

  it('every code maps to a 4xx or 5xx status and a non-empty message', () => {
    for (const [code, entry] of Object.entries(ERRORS)) {
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
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
  });
});
