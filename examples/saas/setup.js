// Prepares the local Tollgate's Demo project for this example, once, with the repository's admin
// CLI (it finds the running server's database by itself): passkeys on as a sign-in method and as
// an MFA method, three plans with monthly and yearly prices if the project has none (Team sold to
// users and to teams, i.e. organizations, per seat: $60 a month covers 3 seats, each further seat
// $8, the seats following the team's members and pending invitations), the metered feature
// "reports" (a meter counting the reports generated, and each plan's limit on it: Basic 3 a period,
// a hard limit; Pro 100, then $0.50 a report; Team 1,000, then allowed), and a webhook
// endpoint for this server, whose signing secret (shown once) goes to .env.local for server.js.
// Run by `npm start`; safe to run again.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const envFile = path.join(here, '.env.local');
const publicUrl = process.env.PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? 3000}`;

const tollgate = (...args) => {
  const out = execFileSync(process.execPath, [path.join(repo, 'bin/tollgate.mjs'), ...args, '--json'], {
    cwd: repo,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out);
};

const env = existsSync(envFile) ? readFileSync(envFile, 'utf8') : '';
const project = process.env.TOLLGATE_PROJECT ?? tollgate('project', 'list').projects.find((p) => p.name === 'Demo')?.id;
if (!project) {
  console.error('No "Demo" project: start Tollgate once with `npm start` in the repository root (or set TOLLGATE_PROJECT).');
  process.exit(1);
}

// Passkeys: their relying party is the host of the project's first callback URL (localhost for
// the Demo project), and the page must be served from that URL's origin. A sign-in method, and one
// of the MFA methods: once the project has an MFA policy (README), a password sign-in asks for a
// passkey as its second step. The MFA policy itself stays as it is.
const { settings } = tollgate('project', 'show', project).project;
if (!settings.enabledProviders.includes('passkey')) {
  console.log('Enabling passkeys (sign-in method "passkey")...');
  tollgate('project', 'update', project, '--enable', 'passkey');
}
if (!settings.mfaMethods.includes('passkey')) {
  console.log('Adding passkeys to the MFA methods...');
  tollgate('project', 'update', project, '--mfa-methods', [...settings.mfaMethods, 'passkey'].join(','));
}

if (tollgate('plan', 'list', project).plans.length === 0) {
  console.log('Creating the plans Basic, Pro and Team...');
  tollgate('plan', 'create', project, '--name', 'Basic', '--description', 'For side projects', '--features', 'reports');
  tollgate('plan', 'create', project, '--name', 'Pro', '--description', 'For growing teams', '--features', 'reports, export', '--recommended');
  tollgate(
    'plan',
    'create',
    project,
    '--name',
    'Team',
    '--description',
    'For whole companies',
    '--features',
    'reports, export, sso',
    '--trials',
    '--trial-days',
    '14',
    '--audience',
    'both',
    // The team's seats follow its members; a pending invitation holds one too.
    '--seat-mode',
    'automatic',
    '--seat-count-invitations',
  );
  for (const [plan, month] of [
    ['Basic', 1000],
    ['Pro', 3000],
  ]) {
    tollgate('price', 'create', project, plan, '--name', 'Monthly', '--amount', String(month), '--interval', 'month');
    tollgate('price', 'create', project, plan, '--name', 'Yearly', '--amount', String(month * 10), '--interval', 'year');
  }
  teamPrices();
}

/** Team's prices, per seat: the amount covers the first 3 seats, each further seat costs the unit amount (minor units). */
function teamPrices() {
  for (const [name, amount, unit, interval] of [
    ['Monthly', 6000, 800, 'month'],
    ['Yearly', 60000, 8000, 'year'],
  ]) {
    tollgate(
      'price',
      'create',
      project,
      'Team',
      '--name',
      name,
      '--amount',
      String(amount),
      '--interval',
      interval,
      '--per-seat',
      '--unit-amount',
      String(unit),
      '--included',
      '3',
    );
  }
}

// Teams subscribe too: the Team plan is sold to organizations as well as users (a project set up
// before organizations could pay has it sold to users only).
const team = tollgate('plan', 'list', project).plans.find((p) => p.name === 'Team');
if (team && team.audience === 'users') {
  console.log('Selling the Team plan to teams (organizations) too...');
  tollgate('plan', 'update', project, 'Team', '--audience', 'both');
}
// Teams pay per seat (a project set up before seats has flat Team prices): per-seat prices in their
// place, the flat ones archived (their subscribers keep them).
if (team?.prices.every((p) => !p.seats)) {
  console.log('Pricing the Team plan per seat ($60 a month for 3 seats, $8 per further seat)...');
  tollgate('plan', 'update', project, 'Team', '--seat-mode', 'automatic', '--seat-count-invitations', 'on');
  teamPrices();
  for (const price of team.prices.filter((p) => p.active)) tollgate('price', 'archive', project, price.id);
}

// Usage-based billing: the meter the server's "Generate report" consumes (usage.consume), and each
// plan's limit on it, given to the plans that have no usage limits yet (a plan's limits are replaced whole).
if (!tollgate('meter', 'list', project).meters.some((m) => m.key === 'reports')) {
  console.log('Creating the meter "reports" (reports generated)...');
  tollgate('meter', 'create', project, 'reports', '--name', 'Reports generated', '--unit', 'reports', '--aggregation', 'count');
}
/** meter:included:reset:overage[:unit amount/package size], amounts in minor units. */
const REPORT_LIMITS = { Basic: 'reports:3:period:refuse', Pro: 'reports:100:period:bill:50/1', Team: 'reports:1000:period:allow' };
for (const plan of tollgate('plan', 'list', project).plans) {
  const limit = REPORT_LIMITS[plan.name];
  if (!limit || (plan.usageLimits ?? []).length > 0) continue;
  console.log(`Limiting the reports of ${plan.name} (${limit})...`);
  tollgate('plan', 'update', project, plan.name, '--limit', limit);
}

if (!/^TOLLGATE_WEBHOOK_SECRET=/m.test(env)) {
  const url = `${publicUrl}/webhooks/tollgate`;
  const { endpoint, secret } = tollgate('webhook', 'create', project, '--url', url, '--description', 'Example SaaS');
  writeFileSync(envFile, `${env}TOLLGATE_WEBHOOK_SECRET=${secret}\n`);
  console.log(`Registered webhook endpoint ${endpoint.id} for ${url}; its secret is in .env.local.`);
}
