import type { Tollgate } from './tollgate';

export const DEMO_CALLBACK_URL = 'http://localhost:3000/callback';

/** First start in development with no project: create "Demo" and print its API key once. */
export async function ensureDemoProject(tollgate: Tollgate, print: (line: string) => void): Promise<void> {
  const { db, stores } = tollgate.core;
  await db.withContext(async () => {
    if ((await stores.projects.count()) > 0) return;
    const created = await tollgate.admin.createProject({ name: 'Demo', callbackUrls: [DEMO_CALLBACK_URL] });
    if (!created.ok) throw new Error(`could not create the demo project: ${created.error}`);
    const { project, apiKey } = created.value;
    print('');
    print('  Created the "Demo" project (shown once, keep it):');
    print(`    project id : ${project.id}`);
    print(`    API key    : ${apiKey}`);
    print(`    callback   : ${DEMO_CALLBACK_URL}`);
    print('');
  });
}
