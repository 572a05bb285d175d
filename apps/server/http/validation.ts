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
