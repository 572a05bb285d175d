/**
 * A small argument parser for the admin CLI: `tollgate <group> <command> [args] [--options]`.
 * Options take zero, one or two values (`--provider-credentials <provider> <json>`), can be
 * repeatable, and accept `--option=value` for single values. Anything unexpected is a usage error.
 */

/** A mistake in the command line: printed with a hint (usage lines), exit code 2. */
export class UsageError extends Error {
  readonly code = 'usage';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

const usageHint = (spec: CommandSpec) => `Usage: ${usageOf(spec)}\nRun \`tollgate ${spec.path.join(' ')} --help\` for details.`;

export interface OptionSpec {
  /** How many values follow the option: 0 (a flag), 1 or 2. */
  arity: 0 | 1 | 2;
  repeatable?: boolean;
  required?: boolean;
  /** Value placeholder(s) shown in help, e.g. `<url>`. */
  placeholder?: string;
  description: string;
}

export interface CommandSpec {
  /** Command words, e.g. ['project', 'update']. */
  path: string[];
  /** Positional arguments, all required, e.g. ['id']. */
  args: string[];
  /** A trailing argument given one or more times, e.g. `plan` for `<plan>...` (after `args`). */
  rest?: string;
  options: Record<string, OptionSpec>;
  summary: string;
}

export interface ParsedCommand {
  args: Record<string, string>;
  /** The values of the trailing `rest` argument, in order (empty for commands without one). */
  rest: string[];
  /** Every value of every option given, in order; flags have an empty array per occurrence. */
  options: Map<string, string[][]>;
}

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  json: { arity: 0, description: 'print exactly one JSON object on stdout' },
  help: { arity: 0, description: 'show help' },
};

/** One-line usage; commands with many options show `[options]` (their --help lists them). */
export function usageOf(spec: CommandSpec): string {
  const args = [...spec.args.map((a) => `<${a}>`), ...(spec.rest ? [`<${spec.rest}>...`] : [])].join(' ');
  const entries = Object.entries(spec.options);
  const opts =
    entries.length > 3
      ? ['[options]']
      : entries.map(([name, o]) => {
          const text = `--${name}${o.arity === 0 ? '' : ` ${o.placeholder ?? '<value>'}`}`;
          return o.required ? text : `[${text}]${o.repeatable ? '...' : ''}`;
        });
  return ['tollgate', ...spec.path, args, ...opts, '[--json]'].filter(Boolean).join(' ');
}

const isOptionToken = (token: string) => token.startsWith('--') && token.length > 2;

/** Parses the tokens that follow the command words against the command's spec. */
export function parseCommandArgs(spec: CommandSpec, tokens: string[]): ParsedCommand {
  const usage = usageHint(spec);
  const known: Record<string, OptionSpec> = { ...spec.options, ...GLOBAL_OPTIONS };
  const options = new Map<string, string[][]>();
  const positionals: string[] = [];
  let onlyPositionals = false;

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (onlyPositionals || !token.startsWith('-') || token === '-') {
      positionals.push(token);
      continue;
    }
    if (token === '--') {
      onlyPositionals = true;
      continue;
    }
    if (token === '-h') {
      options.set('help', [[]]);
      continue;
    }
    if (!isOptionToken(token)) throw new UsageError(`Unknown option "${token}".`, usage);
    const eq = token.indexOf('=');
    const name = token.slice(2, eq === -1 ? undefined : eq);
    const opt = known[name];
    if (!opt) throw new UsageError(`Unknown option "--${name}" for "tollgate ${spec.path.join(' ')}".`, usage);
    const values: string[] = [];
    if (eq !== -1) {
      if (opt.arity !== 1) throw new UsageError(`--${name} does not take "=value"${opt.arity === 2 ? ': give its two values after it' : ''}.`, usage);
      values.push(token.slice(eq + 1));
    } else {
      for (let k = 0; k < opt.arity; k++) {
        const value = tokens[i + 1];
        if (value === undefined || isOptionToken(value)) {
          throw new UsageError(`--${name} needs ${opt.arity === 2 ? 'two values' : 'a value'}: --${name} ${opt.placeholder ?? '<value>'}.`, usage);
        }
        values.push(value);
        i++;
      }
    }
    const seen = options.get(name) ?? [];
    if (seen.length > 0 && !opt.repeatable && opt.arity > 0) throw new UsageError(`--${name} can be given only once.`, usage);
    seen.push(values);
    options.set(name, seen);
  }

  if (options.has('help')) return { args: {}, rest: [], options };
  if (positionals.length < spec.args.length) {
    throw new UsageError(`Missing <${spec.args[positionals.length]}>.`, usage);
  }
  if (spec.rest && positionals.length === spec.args.length) {
    throw new UsageError(`Missing <${spec.rest}>: give at least one.`, usage);
  }
  if (!spec.rest && positionals.length > spec.args.length) {
    throw new UsageError(`Unexpected argument "${positionals[spec.args.length]}".`, usage);
  }
  const args = Object.fromEntries(spec.args.map((name, i) => [name, positionals[i]!]));
  return { args, rest: positionals.slice(spec.args.length), options };
}

/** Accessors over parsed options. */
export class Options {
  private readonly usage: string;
  constructor(
    private readonly parsed: ParsedCommand,
    spec: CommandSpec,
  ) {
    this.usage = usageHint(spec);
  }

  has(name: string): boolean {
    return this.parsed.options.has(name);
  }

  /** The single value of a one-value option, or undefined. */
  string(name: string): string | undefined {
    return this.parsed.options.get(name)?.[0]?.[0];
  }

  /** Every value of a repeatable one-value option. */
  list(name: string): string[] {
    return (this.parsed.options.get(name) ?? []).map((v) => v[0]!);
  }

  /** Every pair of a repeatable two-value option. */
  pairs(name: string): [string, string][] {
    return (this.parsed.options.get(name) ?? []).map((v) => [v[0]!, v[1]!]);
  }

  /** `on` / `off` as a boolean; anything else is a usage error. */
  onOff(name: string): boolean | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    if (value === 'on') return true;
    if (value === 'off') return false;
    throw new UsageError(`--${name} must be "on" or "off", got "${value}".`, this.usage);
  }

  /**
   * A whole number from `min` to `max` (decimal digits only: no sign, exponent or fraction), or
   * undefined when the option is absent; anything else is a usage error.
   */
  int(name: string, min: number, max: number): number | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
    if (!(n >= min && n <= max)) this.fail(`--${name} must be a whole number from ${min} to ${max}, got "${value}".`);
    return n;
  }

  fail(message: string): never {
    throw new UsageError(message, this.usage);
  }
}
