import type { OperatorUseCases, ProjectServerUseCases } from '../../application/billing/use-cases';
import type { UsageUseCases } from '../../application/usage/use-cases';
import type { WebhookUseCases } from '../../application/webhooks/use-cases';
import type { Admin } from '../server/features/admin';
import type { AuditFeature } from '../server/features/audit';
import type { OrganizationUseCases } from '../server/features/organization-use-cases';
import type { EndUser } from '../../domain/user';
import type { CommandSpec, Options } from './args';

/** The shape of every CLI command (apps/cli/commands.ts and apps/cli/billing-commands.ts list them). */

/** What a command prints: `json` with --json, `text` otherwise. */
export interface CommandOutput {
  json: Record<string, unknown>;
  text: string;
  /** The exit code when the command ran but its outcome is a failure (`webhook test` not answered 200); 0 otherwise. */
  exitCode?: number;
  /** The command wrote its output itself (`stdout`, e.g. `audit export` streaming a file): nothing more is printed. */
  written?: true;
}

export interface CommandContext {
  args: Record<string, string>;
  /** The values of the command's trailing `<rest>...` argument. */
  rest: string[];
  options: Options;
  /** The CLI's environment (secrets that should stay out of shell history, e.g. STRIPE_SECRET_KEY). */
  env: NodeJS.ProcessEnv;
  /** Says what the command is about to do, before it does it (stderr; silent with --json). */
  progress(line: string): void;
  /** A warning about how the command was called (stderr, with --json too). */
  warn(line: string): void;
  /** Writes to stdout as the command runs, resolving once written (a stream's pace): for output too large to hold. */
  stdout(text: string): Promise<void>;
}

/** Organizations' use cases (the same ones the console calls), with what an operator's command looks up besides. */
export interface OrganizationOperator {
  useCases: OrganizationUseCases;
  /** The end user of the project with this email (lower-cased key), if any: as the console's Add member finds one. */
  findUserByEmail(projectId: string, emailKey: string): Promise<EndUser | null>;
  /** The core's clock (whether an invitation is still pending). */
  now(): Date;
}

/** Billing's operator use cases, and an organization's billing as the project's server reaches it (its bought seats). */
export type CliBilling = OperatorUseCases & Pick<ProjectServerUseCases, 'organizationBilling'>;

/**
 * Runs the operator's use cases (the ones the console calls too), inside one database context:
 * projects, keys and users (`admin`), billing, project webhooks, the audit log, organizations, and
 * usage-based billing (meters, credits, usage).
 */
export type Execute = (
  admin: Admin,
  billing: CliBilling,
  webhooks: WebhookUseCases,
  audit: AuditFeature['useCases'],
  organizations: OrganizationOperator,
  usage: UsageUseCases,
) => Promise<CommandOutput>;

export interface Command extends CommandSpec {
  /**
   * The command records outbox messages (a webhook resend, billing events fanned out to
   * endpoints): the CLI connects to the job queue first, so they are handed over at once.
   */
  enqueues?: boolean;
  /** Checks the arguments (throwing a UsageError) before any database is opened. */
  plan(ctx: CommandContext): Execute;
}
