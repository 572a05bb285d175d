import { readFileSync } from 'node:fs';
import type { CommandContext } from './command';

/**
 * Where a secret option's value comes from. A value on the command line stays in shell history and
 * the process list, and `npm run tollgate -- …` prints the whole command line before it runs, so
 * every option that takes a secret also reads it from somewhere that is never echoed:
 *
 * - `@<file>`: the file's content (trailing newline dropped for a single-line secret);
 * - `@-`: standard input (a pipe, a heredoc, or a password manager's output);
 * - `env:<NAME>`: the environment variable NAME.
 *
 * Anything else is the value itself: accepted, with a warning on stderr that names the option
 * (never the value) and the safer forms.
 */
export const SECRET_SOURCES = '@file, @- (stdin) or env:NAME';

/** True when the value names where the secret is (`@file`, `@-`, `env:NAME`) rather than being it. */
export const isSecretSource = (raw: string) => raw.startsWith('@') || raw.startsWith('env:');

/** Warns that a secret was given inline, naming the option only. */
export const warnInlineSecret = (ctx: Pick<CommandContext, 'warn'>, what: string) =>
  ctx.warn(`${what} was given on the command line, where shell history, the process list and npm's echo keep it: give ${SECRET_SOURCES} instead.`);

/**
 * Reads a secret option's value from where it says; `what` names the option in messages, e.g.
 * `--secret-key`. An inline value is returned as given, with a warning unless `warn` is false.
 */
export function readSecret(ctx: Pick<CommandContext, 'options' | 'env' | 'warn'>, what: string, raw: string, warn = true): string {
  if (raw.startsWith('env:')) {
    const name = raw.slice('env:'.length);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return ctx.options.fail(`${what}: "env:${name}" is not an environment variable name.`);
    const value = ctx.env[name];
    if (value === undefined || value.trim() === '') return ctx.options.fail(`${what}: the environment variable ${name} is not set.`);
    return value.trim();
  }
  if (raw.startsWith('@')) {
    const file = raw.slice(1);
    let text: string;
    try {
      text = readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (e) {
      return ctx.options.fail(`${what}: cannot read ${file === '-' ? 'stdin' : `"${file}"`} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`);
    }
    if (text.trim() === '') return ctx.options.fail(`${what}: ${file === '-' ? 'stdin' : `"${file}"`} is empty.`);
    return text.trim().includes('\n') ? text : text.trim();
  }
  if (warn) warnInlineSecret(ctx, what);
  return raw;
}
