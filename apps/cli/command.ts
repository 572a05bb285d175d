import type { OperatorUseCases } from '../../application/billing/use-cases';
import type { Admin } from '../server/admin';
import type { CommandSpec, Options } from './args';

/** The shape of every CLI command (apps/cli/commands.ts and apps/cli/billing-commands.ts list them). */

/** What a command prints: `json` with --json, `text` otherwise. */
export interface CommandOutput {
  json: Record<string, unknown>;
  text: string;
}

export interface CommandContext {
  args: Record<string, string>;
  /** The values of the command's trailing `<rest>...` argument. */
  rest: string[];
  options: Options;
  /** The CLI's environment (secrets that should stay out of shell history, e.g. STRIPE_SECRET_KEY). */
  env: NodeJS.ProcessEnv;
}

/**
 * Runs the operator's use cases (the ones the console calls too), inside one database context:
 * projects, keys and users (`admin`), and billing.
 */
export type Execute = (admin: Admin, billing: OperatorUseCases) => Promise<CommandOutput>;

export interface Command extends CommandSpec {
  /** Checks the arguments (throwing a UsageError) before any database is opened. */
  plan(ctx: CommandContext): Execute;
}
