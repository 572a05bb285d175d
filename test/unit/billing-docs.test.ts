import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { billingErrors } from '../../contract/errors';

const doc = () => readFileSync(path.resolve(import.meta.dirname, '../../docs/billing.md'), 'utf8');

describe('docs/billing.md', () => {
  it('lists every billing error code with its status and message, as contract/errors/billing.errors.ts says', () => {
    const text = doc();
    const section = text.slice(text.indexOf('\n## Errors'));
    const rows = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \| (.+?) \|$/gm)].map(([, status, code, message]) => [
      code!,
      { status: Number(status), message },
    ]);
    expect(Object.fromEntries(rows)).toEqual(billingErrors);
    expect(rows.length).toBe(Object.keys(billingErrors).length);
  });
});
