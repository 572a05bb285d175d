// The project's own server: it holds the Tollgate API key, serves the page, answers the page's
// session routes, guards its API with the user's entitlements and team role, meters the reports it
// generates (usage.consume), and receives Tollgate's webhooks.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { createTollgate, isTollgateError, WebhookVerificationError } from '@tollgate/sdk';

const here = path.dirname(fileURLToPath(import.meta.url));
// setup.js writes TOLLGATE_WEBHOOK_SECRET (and what else it created) to .env.local.
if (existsSync(path.join(here, '.env.local'))) process.loadEnvFile(path.join(here, '.env.local'));

const PORT = Number(process.env.PORT ?? 3000);
const PUBLIC_URL = process.env.PUBLIC_URL ?? `http://localhost:${PORT}`;
if (!process.env.TOLLGATE_API_KEY) {
  console.error('Set TOLLGATE_API_KEY to the key `npm start` printed in the Tollgate checkout (see README.md).');
  process.exit(1);
}

const tollgate = createTollgate({
  baseUrl: process.env.TOLLGATE_URL ?? 'http://localhost:4000',
  apiKey: process.env.TOLLGATE_API_KEY,
  webhookSecret: process.env.TOLLGATE_WEBHOOK_SECRET,
});

const app = express();

// The browser's session (sign-up, sign-in, refresh, sign-out) and its billing and team calls go through here.
app.use('/tollgate', tollgate.sessionRoutes({ callbackUrl: `${PUBLIC_URL}/callback` }).express);

// Webhooks: verified on the raw body, then kept per user (or per team, for a team's subscription) for the page to show.
const events = [];
app.post('/webhooks/tollgate', express.raw({ type: '*/*' }), async (req, res, next) => {
  try {
    const event = await tollgate.verifyWebhook({ payload: req.body, headers: req.headers });
    if (!events.some((e) => e.id === event.id))
      events.unshift({
        id: event.id,
        type: event.type,
        userId: event.userId ?? null,
        organizationId: event.organizationId ?? null,
        created: event.created,
        verified: true,
      });
    events.splice(100);
    res.sendStatus(200);
  } catch (error) {
    if (error instanceof WebhookVerificationError) return res.status(error.status).json({ error: error.message });
    next(error);
  }
});

// The project's API: signed-in users only, and the report for Pro (or any plan above it) only: the
// plan of the token's context, i.e. the active team's when the user works in a team, else their own.
app.get('/api/me', tollgate.requireUser(), (req, res) => res.json({ user: req.user }));
app.get('/api/report', tollgate.requireUser(), tollgate.requireEntitlement({ plan: 'pro' }), (req, res) =>
  res.json({
    title: `Quarterly report for ${req.user.email}`,
    rows: [
      { region: 'North', revenue: 48200 },
      { region: 'South', revenue: 39150 },
      { region: 'West', revenue: 51720 },
    ],
  }),
);
// A metered feature: each report generated is consumed from the plan's "reports" (its limit, then
// credits), checked and recorded in one atomic step. The token's context decides whose: the active
// team's when the user works in a team, else their own. At a hard limit nothing is recorded.
app.post('/api/reports/generate', tollgate.requireUser(), async (req, res, next) => {
  try {
    const subject = req.organization ? { type: 'organization', id: req.organization.id } : { type: 'user', id: req.user.id };
    const usage = await tollgate.usage.consume({ subject, feature: 'reports' });
    if (!usage.allowed) {
      const resets = new Date(usage.resetsAt).toLocaleDateString('en-US', { month: 'short', day: 'numeric' });
      const error =
        usage.included === 0 && usage.credits === 0
          ? 'Your plan includes no reports: pick a plan above.'
          : `You have generated all ${usage.included.toLocaleString('en-US')} reports of your plan: more on ${resets}, or pick a bigger plan.`;
      return res.status(402).json({ error, code: 'usage_limit_reached' });
    }
    res.json({ generated: true, used: usage.used, included: usage.included, overage: usage.overage });
  } catch (error) {
    next(error);
  }
});

// The user's events, and those of the active team's subscription.
app.get('/api/events', tollgate.requireUser(), (req, res) =>
  res.json({ events: events.filter((e) => e.userId === req.user.id || (req.organization && e.organizationId === req.organization.id)) }),
);

// Teams: the token's active organization, as Tollgate verified it (role and permissions as they are now).
app.get('/api/team', tollgate.requireUser(), (req, res) =>
  res.json({ organization: req.organization, canInvite: req.tollgate.has({ permission: 'org:members:manage' }) }),
);
// Only the team's managers: 403 missing_permission for the others (and without an active team).
app.get('/api/team/audit', tollgate.requireAccess({ permission: 'org:members:manage' }), (req, res) =>
  res.json({ team: req.organization.slug, checkedBy: req.user.email }),
);

// The page (built by `vite build`).
const dist = path.join(here, 'dist');
app.use(express.static(dist));
app.get('*', (_req, res) => res.sendFile(path.join(dist, 'index.html')));

app.use((error, _req, res, _next) => {
  console.error(error);
  res.status(isTollgateError(error) ? 502 : 500).json({ error: 'Something went wrong' });
});

app.listen(PORT, () => console.log(`Example SaaS on ${PUBLIC_URL} (Tollgate at ${process.env.TOLLGATE_URL ?? 'http://localhost:4000'})`));
