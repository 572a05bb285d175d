import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { webhooksErrors } from '../../contract/errors';
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../domain/webhooks/delivery';

const doc = () => readFileSync(path.resolve(import.meta.dirname, '../../docs/webhooks.md'), 'utf8');

describe('docs/webhooks.md', () => {
  it('lists every webhook error code with its status and message, as contract/errors/webhooks.errors.ts says', () => {
    const text = doc();
    const section = text.slice(text.indexOf('\n## Errors'));
    const rows = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \| (.+?) \|$/gm)].map(([, status, code, message]) => [
      code!,
      { status: Number(status), message },
    ]);
    expect(Object.fromEntries(rows)).toEqual(webhooksErrors);
  });

  it('states the retry schedule the domain uses', () => {
    const human = (s: number) => (s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : `${s / 3600} h`);
    expect(doc().replace(/\s+/g, ' ')).toContain(
      WEBHOOK_RETRY_DELAYS_SECONDS.map(human)
        .join(', ')
        .replace(/, ([^,]+)$/, ' and $1'),
    );
  });
});
