import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../apps/server/config';

describe('docs/configuration.md', () => {
  it('documents every environment variable the configuration schema reads', () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/configuration.md'), 'utf8');
    const missing = Object.keys(ConfigSchema.shape).filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
