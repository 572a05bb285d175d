/** Longest error text kept on a message or attempt row. */
export const MAX_ERROR_LENGTH = 500;
const REDACTED = '[redacted]';

/**
 * The error of a failed attempt as it may be stored and logged: its message only (no stack), with
 * every value of the payload (and every digit-bearing word in it: codes, tokens, numbers) replaced,
 * then truncated. Payloads carry codes and links and are stored encrypted; an error text that
 * repeats one (an SMTP server echoing the recipient, a gateway quoting the body) must not leak it.
 */
export function safeErrorText(error: unknown, payload?: unknown): string {
  let text = error instanceof Error ? error.message : typeof error === 'string' ? error : 'error';
  for (const secret of secretsOf(payload)) text = text.split(secret).join(REDACTED);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

function secretsOf(payload: unknown): string[] {
  const found = new Set<string>();
  const visit = (value: unknown, depth: number): void => {
    if (depth > 8) return;
    if (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) >= 1000) found.add(String(value));
    if (typeof value === 'string') {
      if (value.length >= 4) found.add(value);
      for (const word of value.split(/[^\p{L}\p{N}_~+-]+/u)) if (word.length >= 4 && /\d/.test(word)) found.add(word);
    } else if (value && typeof value === 'object') {
      for (const v of Array.isArray(value) ? value : Object.values(value)) visit(v, depth + 1);
    }
  };
  visit(payload, 0);
  // Longest first, so a value is replaced whole before a word inside it.
  return [...found].sort((a, b) => b.length - a.length);
}
