import type { Tollgate } from './tollgate';

export const DEMO_CALLBACK_URL = 'http://localhost:3000/callback';

/** First start in development with no project: create "Demo" on the sandbox processor and print its API key once. */
export async function ensureDemoProject(tollgate: Tollgate, print: (line: string) => void): Promise<void> {
  const { db, stores } = tollgate.core;
  await db.withContext(async () => {
    if ((await stores.projects.count()) > 0) return;
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
  });
}
