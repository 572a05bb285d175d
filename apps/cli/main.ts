import { loadCoreConfig } from '../server/config';
import { GLOBAL_OPTIONS, Options, UsageError, parseCommandArgs, usageOf, type OptionSpec } from './args';
import { COMMANDS, GROUPS, findCommand, type Command, type CommandOutput } from './commands';
import { CommandError, describeFault } from './messages';
import type { CliRuntime } from './runtime';
import { BUILD, describeBuild } from '../server/version';

/**
 * The admin CLI: `tollgate <command> [arguments] [--options] [--json]`. It builds the same
 * application core as the server and calls its use cases; it never serves HTTP or runs jobs.
 * Exit codes: 0 success, 1 the command failed (e.g. project not found), 2 bad arguments.
 */

export interface CliIo {
  stdout(text: string): Promise<void>;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
}

// ---------------------------------------------------------------------------------------------
// Help

function optionLines(options: Record<string, OptionSpec>): string[] {
  const entries = Object.entries(options).map(([name, o]) => {
    const left = `--${name}${o.arity ? ` ${o.placeholder ?? '<value>'}` : ''}${o.repeatable ? ' (repeatable)' : ''}`;
    return [left, o.description] as const;
  });
  const width = Math.max(...entries.map(([l]) => l.length));
  return entries.map(([l, d]) => `  ${l.padEnd(width)}  ${d}`);
}

function generalHelp(): string {
  const rows = COMMANDS.map((c) => [[...c.path, ...c.args.map((a) => `<${a}>`), ...(c.rest ? [`<${c.rest}>...`] : [])].join(' '), c.summary] as const);
  const width = Math.max(...rows.map(([l]) => l.length));
  return [
    'tollgate: administer a Tollgate deployment (projects, API keys, end users, organizations, billing, the audit log, migrations)',
    '',
    'Usage: tollgate <command> [arguments] [options] [--json]',
    '',
    'Commands:',
    ...rows.map(([l, d]) => `  ${l.padEnd(width)}  ${d}`),
    '',
    'Options for every command:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    '`tollgate --version` prints the version, and the commit and time of the build.',
    'Run `tollgate <command> --help` for the options of a command.',
    'Database: DATABASE_URL, or the embedded PostgreSQL under TOLLGATE_DATA_DIR (.tollgate/).',
    'Secrets are encrypted with TOLLGATE_SECRET_KEY (the same key the server uses).',
  ].join('\n');
}

function commandHelp(command: Command): string {
  return [
    `Usage: ${usageOf(command)}`,
    '',
    `${command.summary}.`,
    ...(Object.keys(command.options).length ? ['', 'Options:', ...optionLines(command.options)] : []),
    '',
    ...optionLines(GLOBAL_OPTIONS),
  ].join('\n');
}

/** Help for a group (`billing`) or a subgroup (`billing sandbox`): its commands with their usage. */
function groupHelp(prefix: string[]): string {
  const commands = COMMANDS.filter((c) => extends_(c.path, prefix));
  const title = GROUPS[prefix.join(' ')] ?? GROUPS[prefix[0]!];
  return [`tollgate ${prefix.join(' ')}: ${title}`, '', ...commands.map((c) => `  ${usageOf(c)}\n      ${c.summary}`)].join('\n');
}

const helpOutput = (text: string, topic: string[]): CommandOutput => ({
  text,
  json: {
    help: text,
    commands: COMMANDS.filter((c) => topic.every((w, i) => c.path[i] === w)).map((c) => ({
      command: c.path.join(' '),
      usage: usageOf(c),
      summary: c.summary,
    })),
  },
});

// ---------------------------------------------------------------------------------------------
// Command resolution

type Resolved = { kind: 'help'; output: CommandOutput } | { kind: 'command'; command: Command; rest: string[] };

/** `tollgate --version`: the build's version, commit and time (the version alone is the first word after `tollgate`). */
const versionOutput = (): CommandOutput => ({
  text: `tollgate ${describeBuild()}`,
  json: { version: BUILD.version, commit: BUILD.commit, builtAt: BUILD.builtAt },
});

/** True when `path` starts with `prefix` and is longer. */
const extends_ = (path: string[], prefix: string[]) => path.length > prefix.length && prefix.every((w, i) => path[i] === w);
/** The words that can follow `prefix` (`billing` -> connect, status, ..., sandbox), in command order. */
const nextWords = (prefix: string[]) => [...new Set(COMMANDS.filter((c) => extends_(c.path, prefix)).map((c) => c.path[prefix.length]!))];
const isPrefix = (words: string[]) => COMMANDS.some((c) => extends_(c.path, words));

function resolve(argv: string[]): Resolved {
  const words: string[] = [];
  let i = 0;
  let help = false;
  for (; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--help' || token === '-h') {
      help = true;
      continue;
    }
    if (token === '--json') continue;
    if (words.length === 0 && (token === '--version' || token === '-V')) return { kind: 'help', output: versionOutput() };
    if (token.startsWith('-')) {
      if (words.length === 0) throw new UsageError(`Unknown option "${token}" before the command. Run \`tollgate --help\`.`);
      break;
    }
    if (words.length === 0 && token === 'help') {
      help = true;
      continue;
    }
    words.push(token);
    if (findCommand(words) || !isPrefix(words)) {
      i++;
      break;
    }
  }
  const rest = [...(help ? ['--help'] : []), ...argv.slice(i)];

  if (words.length === 0) {
    if (help) return { kind: 'help', output: helpOutput(generalHelp(), []) };
    throw new UsageError('Missing command.', 'Usage: tollgate <command> [arguments] [options] [--json]\nRun `tollgate --help` for the list of commands.');
  }
  const command = findCommand(words);
  if (command) return { kind: 'command', command, rest };

  const group = words[0]!;
  if (!GROUPS[group]) {
    const names = [...Object.keys(GROUPS).filter((g) => !g.includes(' ')), 'migrate'];
    throw new UsageError(`Unknown command "${words.join(' ')}". Commands: ${names.join(', ')}; run \`tollgate --help\`.`);
  }
  if (isPrefix(words)) {
    const topic = words.join(' ');
    if (help) return { kind: 'help', output: helpOutput(groupHelp(words), words) };
    throw new UsageError(`Missing ${topic} command: one of ${nextWords(words).join(', ')}.`, groupHelp(words));
  }
  // `words` stopped at the first word that leads nowhere: its parent is a group or subgroup.
  const parent = words.slice(0, -1);
  throw new UsageError(`Unknown ${parent.join(' ')} command "${words[words.length - 1]}": expected one of ${nextWords(parent).join(', ')}.`, groupHelp(parent));
}

// ---------------------------------------------------------------------------------------------
// Running

async function write(io: CliIo, json: boolean, output: CommandOutput): Promise<void> {
  if (output.written) return;
  await io.stdout(json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`);
}

/** Runs one command line and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const json = argv.includes('--json');
  let runtime: CliRuntime | undefined;
  try {
    const resolved = resolve(argv);
    if (resolved.kind === 'help') {
      await write(io, json, resolved.output);
      return 0;
    }
    const { command, rest } = resolved;
    const parsed = parseCommandArgs(command, rest);
    if (parsed.options.has('help')) {
      await write(io, json, helpOutput(commandHelp(command), command.path));
      return 0;
    }
    const progress = (line: string) => {
      if (!json) io.stderr(line);
    };
    const warn = (line: string) => io.stderr(`Warning: ${line}`);
    const execute = command.plan({
      args: parsed.args,
      rest: parsed.rest,
      options: new Options(parsed, command),
      env: io.env,
      progress,
      warn,
      stdout: io.stdout,
    });

    let config: ReturnType<typeof loadCoreConfig>;
    try {
      config = loadCoreConfig(io.env);
    } catch (e) {
      throw new CommandError('invalid_configuration', (e as Error).message);
    }
    // Loaded only now, so that help and argument errors answer without loading the application.
    const { openRuntime } = await import('./runtime');
    runtime = await openRuntime(config, (line) => {
      if (!json) io.stderr(line);
    });
    const { core, admin, billing, webhooks, audit, organizations, usage } = runtime;
    if (command.enqueues) await runtime.startJobQueue();
    const output = await core.db.withContext(() => execute(admin, billing, webhooks, audit, organizations, usage));
    await write(io, json, output);
    return output.exitCode ?? 0;
  } catch (e) {
    const failure = e instanceof UsageError ? new CommandError('usage', e.message, 2) : e instanceof CommandError ? e : describeFault(e);
    io.stderr(`Error: ${failure.message}`);
    if (e instanceof UsageError && e.hint) io.stderr(e.hint);
    if (json) await io.stdout(`${JSON.stringify({ error: failure.message, code: failure.code })}\n`);
    return failure.exitCode;
  } finally {
    await runtime?.close().catch((e: unknown) => io.stderr(`Warning: closing the database failed: ${(e as Error).message}`));
  }
}

const processIo: CliIo = {
  env: process.env,
  stdout: (text) => new Promise<void>((resolve, reject) => process.stdout.write(text, (e) => (e ? reject(e) : resolve()))),
  stderr: (text) => process.stderr.write(`${text}\n`),
};

// stdout carries only the command's output: whatever a library prints to the console goes to stderr.
for (const method of ['log', 'info', 'debug'] as const) console[method] = console.error.bind(console);

// Exit as soon as the command is done: nothing (pools, timers) may keep the process alive.
runCli(process.argv.slice(2), processIo).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`Error: ${(e as Error)?.message ?? String(e)}\n`);
    process.exit(1);
  },
);
