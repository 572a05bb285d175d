import type { Tollgate } from './tollgate';

export const DEMO_CALLBACK_URL = 'http://localhost:3000/callback';

/** First start in development with no project: create "Demo" on the sandbox processor and print its API key once. */
export async function ensureDemoProject(tollgate: Tollgate, print: (line: string) => void): Promise<void> {
  const { db, stores } = tollgate.core;
  await db.withContext(async () => {
    if ((await stores.projects.count()) > 0) return printReturningConsoleLink(tollgate, print);
    const created = await tollgate.admin.createProject({ name: 'Demo', callbackUrls: [DEMO_CALLBACK_URL] });
    if (!created.ok) throw new Error(`could not create the demo project: ${created.error}`);
    const { project, apiKey } = created.value;
    // The Demo project sells on the sandbox processor, so subscriptions work with no Stripe account.
    const billing = await tollgate.billing.connectBilling(project.id, { processor: 'sandbox' });
    print('');
    print('  Created the "Demo" project (shown once, keep it):');
    print(`    project id : ${project.id}`);
    print(`    API key    : ${apiKey}`);
    print(`    callback   : ${DEMO_CALLBACK_URL}`);
    if (billing.ok) print('    billing    : sandbox processor (test cards such as pm_card_visa; see docs/billing.md)');
    print('');
    await printConsoleLink(tollgate, print);
  });
}

/** The development operator's address (the first start makes it when no console account exists). */
export const DEV_OPERATOR_EMAIL = 'operator@localhost.test';

/**
 * First start in development with no console account: an operator and its one-time sign-in link,
 * printed beside the Demo key, so that one click opens the console.
 */
async function printConsoleLink(tollgate: Tollgate, print: (line: string) => void): Promise<void> {
  const accounts = tollgate.admin.console;
  if ((await accounts.countAccounts()) > 0) return;
  const created = await accounts.createAccount({ email: DEV_OPERATOR_EMAIL, role: 'operator' });
  if (!created.ok || !created.value.link) throw new Error(`could not create the development operator: ${created.ok ? 'no link' : created.error}`);
  print('  Web console (one-time sign-in link for an operator, valid for one hour):');
  print(`    ${accounts.signInLinkUrl(created.value.link.token)}`);
  print(`    later: npm run tollgate -- admin link --email ${DEV_OPERATOR_EMAIL}`);
  print('');
}

/**
 * A later start in development: a new one-time sign-in link for the development operator (the
 * first start made it), or, where it is gone, the command that makes one for another account.
 */
async function printReturningConsoleLink(tollgate: Tollgate, print: (line: string) => void): Promise<void> {
  const accounts = tollgate.admin.console;
  const link = await accounts.issueSignInLinkByEmail(DEV_OPERATOR_EMAIL);
  print('');
  if (link.ok) {
    print(`  Web console (one-time sign-in link for ${DEV_OPERATOR_EMAIL}, valid for one hour):`);
    print(`    ${accounts.signInLinkUrl(link.value.token)}`);
  } else {
    print(`  Web console: ${tollgate.core.config.publicUrl}/dashboard`);
  }
  print('    another link: npm run tollgate -- admin link --email <console account email>');
  print('');
}
