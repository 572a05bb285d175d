import { describe, expect, it } from 'vitest';
import { assertTestDatabase } from '../support/database';

describe('test database guard', () => {
  it.each(['postgres://postgres@127.0.0.1:5432/tollgate', 'postgres://u:p@db.example.com/production', 'postgres://h/postgres'])('refuses %s', (url) => {
    expect(() => assertTestDatabase(url)).toThrow(/must contain "test"/);
  });

  it.each(['postgres://postgres@127.0.0.1:5432/tollgate_test', 'postgres://h/test', 'postgres://h/tollgate_test_ab12cd'])('accepts %s', (url) => {
    expect(() => assertTestDatabase(url)).not.toThrow();
  });
});
