import type { DnsTxtResolver } from '../../../application/organizations/deps';
import type { Config } from '../config';
import type { Core } from '../core';
import { wireAdmin } from './admin';
import { wireAudit } from './audit';
import { wireBilling } from './billing';
import { wireConsole } from './console';
import { wireEmail } from './email';
import { wireMaintenance } from './maintenance';
import { buildSmsSender, wireMfa } from './mfa';
import { wireOAuth } from './oauth';
import { wireOrganizations } from './organizations';
import { wireOverview } from './overview';
import { buildPasskeyDeps, buildPasskeyFactorCheck, wirePasskeys } from './passkeys';
import { wireSessions } from './sessions';
import type { Feature } from './types';
import { wireUsage } from './usage';
import { wireWebhooks } from './webhooks';

export interface FeaturesInput {
  core: Core;
  /** The whole configuration: mail, SMS, MFA and OAuth settings included (the server's and the worker's). */
  config: Config;
  /** Looks up DNS TXT records for verified domains (tests give a double); the system resolver otherwise. */
  dns?: DnsTxtResolver;
}

/**
 * Every feature of a server or worker process, each built once on the core and given what it takes
 * from another explicitly: the MFA feature's sign-in gate goes into email and sessions, the email
 * feature's mail transport into the console, and the console's project-access check into the
 * admin, billing and webhooks admin routes. Cheap and without side effects: nothing is started.
 */
export function wireFeatures({ core, config, dns }: FeaturesInput) {
  const maintenance = wireMaintenance({ core, config });
  const passkeyDeps = buildPasskeyDeps(core, config);
  const mfa = wireMfa({ core, config, sms: buildSmsSender(config, core.logger, core.clock), passkeyFactor: buildPasskeyFactorCheck(core, passkeyDeps) });
  const passkeys = wirePasskeys({ core, config, deps: passkeyDeps, signInGate: mfa.signInGate, finishChallenge: mfa.finishChallenge });
  const email = wireEmail({ core, config, signInGate: mfa.signInGate });
  const consoleFeature = wireConsole({ core, mail: email.mail });
  const audit = wireAudit({ core, config, console: consoleFeature.useCases });
  const oauth = wireOAuth({ core, config });
  const sessions = wireSessions({ core, signInGate: mfa.signInGate });
  const billing = wireBilling({ core, config, console: consoleFeature.useCases });
  const webhooks = wireWebhooks({ core, config, console: consoleFeature.useCases });
  const admin = wireAdmin({ core, console: consoleFeature.useCases });
  const usage = wireUsage({ core, console: consoleFeature.useCases });
  const overview = wireOverview({ core, console: consoleFeature.useCases });
  const organizations = wireOrganizations({ core, mail: email.mail, console: consoleFeature.useCases, billing: billing.useCases, ...(dns ? { dns } : {}) });
  // Listed in the order their jobs are registered and their pages mounted.
  return {
    maintenance,
    email,
    console: consoleFeature,
    audit,
    mfa,
    passkeys,
    oauth,
    billing,
    usage,
    webhooks,
    sessions,
    admin,
    organizations,
    overview,
  } satisfies Record<string, Feature>;
}

export type Features = ReturnType<typeof wireFeatures>;

/** Releases what the features hold open (mail and webhook connections), once the job queue stopped. */
export async function closeFeatures(features: Iterable<Feature>): Promise<void> {
  for (const feature of features) await feature.close?.();
}
