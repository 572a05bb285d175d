import { describe, expect, it } from 'vitest';
import { isUuid, read, rowMapper } from '../../infrastructure/persistence/rows';

interface Thing {
  id: string;
  projectId: string;
  label: string | null;
  count: number;
  secretEncrypted: string;
  createdAt: Date;
  usedAt: Date | null;
}

const toThing = rowMapper<Thing>({
  id: read.text,
  projectId: read.text,
  label: read.textOrNull,
  count: read.number,
  secretEncrypted: ['secret_enc', read.text],
  createdAt: read.date,
  usedAt: read.dateOrNull,
});

describe('rowMapper', () => {
  it('names its columns in snake_case, or as the spec says', () => {
    expect(toThing.columns).toBe('id, project_id, label, count, secret_enc, created_at, used_at');
  });

  it('reads a row into exactly the fields of the spec', () => {
    const at = new Date('2026-01-02T03:04:05Z');
    const thing = toThing({
      id: 'a',
      project_id: 'p',
      label: null,
      count: '42',
      secret_enc: 's',
      created_at: at,
      used_at: '2026-01-03T00:00:00Z',
      password_hash: 'never copied',
    });
    expect(thing).toEqual({
      id: 'a',
      projectId: 'p',
      label: null,
      count: 42,
      secretEncrypted: 's',
      createdAt: at,
      usedAt: new Date('2026-01-03T00:00:00Z'),
    });
    expect(Object.keys(thing)).not.toContain('password_hash');
  });

  it('first() maps the first row, or answers null', () => {
    expect(toThing.first([])).toBeNull();
    expect(toThing.first([{ id: 'x', project_id: 'p', label: 'l', count: 1, secret_enc: 's', created_at: new Date(0), used_at: null }])?.id).toBe('x');
  });
});

describe('isUuid', () => {
  it('accepts uuids in either case and nothing else', () => {
    expect(isUuid('6f0c2a4e-1b2c-4d5e-8f90-123456789abc')).toBe(true);
    expect(isUuid('6F0C2A4E-1B2C-4D5E-8F90-123456789ABC')).toBe(true);
    expect(isUuid('6f0c2a4e-1b2c-4d5e-8f90-123456789ab')).toBe(false);
    expect(isUuid("6f0c2a4e-1b2c-4d5e-8f90-123456789abc' or 1=1")).toBe(false);
    expect(isUuid('')).toBe(false);
  });
});
