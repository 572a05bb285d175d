import type { ZodError } from 'zod';

/** One readable sentence naming the first problem of a failed validation, e.g. "email: Required". */
export function describeZodError(where: string, error: ZodError): string {
  const issue = error.issues[0];
  if (!issue) return `Invalid ${where}`;
  const path = issue.path.join('.');
  if (issue.code === 'invalid_type' && issue.received === 'undefined') {
    return path ? `Missing ${where} field: ${path}` : `Missing ${where}`;
  }
  if (issue.code === 'invalid_type') {
    return `Invalid ${where} field ${path || where}: expected ${issue.expected}, received ${issue.received}`;
  }
  return path ? `Invalid ${where} field ${path}: ${issue.message}` : `Invalid ${where}: ${issue.message}`;
}

/** A string of the request that holds a character PostgreSQL cannot store, and where it is. */
export interface UnstorableString {
  /** `body`, `query` or `path`, then the field, e.g. `body field state` or `query field callback_url`. */
  field: string;
  /** What was found, e.g. `a NUL character (U+0000)`. */
  found: string;
}

const SUSPECT = /[\u0000\ud800-\udfff]/;

/** What in `s` cannot be stored: NUL, or a UTF-16 surrogate without its pair; null when it is fine. */
function unstorableIn(s: string): string | null {
  if (!SUSPECT.test(s)) return null; // the common case: one scan, nothing found
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return 'a NUL character (U+0000)';
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++; // a pair: one character outside the BMP (an emoji), fine
        continue;
      }
      return `an unpaired UTF-16 surrogate (U+${c.toString(16).toUpperCase()})`;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return `an unpaired UTF-16 surrogate (U+${c.toString(16).toUpperCase()})`;
  }
  return null;
}

/**
 * The one rule for every string a request carries (JSON body, form, query, path parameters, and
 * the keys of their objects): a string may hold any character PostgreSQL can store as text, which
 * is every Unicode character but NUL (U+0000); a lone UTF-16 surrogate (JSON allows `"\ud800"`)
 * is no character at all and would be stored as U+FFFD, so it is refused too. Other control
 * characters (tab, newline, U+0001 to U+001F, U+007F) are accepted and stored as sent; fields with
 * a format of their own (email, URL, code, locale) refuse them through their own validation.
 * Returns the first offending string, or null. Runs on every request: a regular-expression scan
 * per string, and a closer look only when it finds a NUL or a surrogate.
 */
export function findUnstorableString(where: 'body' | 'query' | 'path', value: unknown): UnstorableString | null {
  const name = (path: string) => (path ? `${where} field ${path}` : where);
  if (typeof value === 'string') {
    const found = unstorableIn(value);
    return found ? { field: name(''), found } : null;
  }
  // Iterative, so that no nesting depth (a 100 kB body can nest 50,000 arrays) overflows the stack.
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const entries: Array<[string, unknown]> = Array.isArray(v) ? v.map((item, i) => [String(i), item]) : Object.entries(v);
    for (const [key, item] of entries) {
      const inKey = Array.isArray(v) ? null : unstorableIn(key);
      if (inKey) return { field: `${where} field name ${JSON.stringify(key)}`, found: inKey };
      const at = path ? `${path}.${key}` : key;
      if (typeof item === 'string') {
        const found = unstorableIn(item);
        if (found) return { field: name(at), found };
      } else if (item !== null && typeof item === 'object') {
        stack.push([item, at]);
      }
    }
  }
  return null;
}

/**
 * The one rule applied to a whole request (path parameters, query, body), as the refusal it answers
 * (`invalid_characters`): the first string that cannot be stored, and the rule; null when all can.
 */
export function unstorableRefusal(req: { params?: unknown; query?: unknown; body?: unknown }): { message: string; hint: string } | null {
  const unstorable = findUnstorableString('path', req.params) ?? findUnstorableString('query', req.query) ?? findUnstorableString('body', req.body);
  if (!unstorable) return null;
  return {
    message: `Invalid ${unstorable.field}: it holds ${unstorable.found}, which cannot be stored`,
    hint: 'A string may hold any character but NUL (U+0000) and unpaired UTF-16 surrogates; other control characters are kept as sent',
  };
}
