/**
 * The baselines each workload is measured against, served by a bare Express 4 app in its own
 * process (same process model as Tollgate: one Node process, same machine):
 *   GET  /ready         200 once listening
 *   POST /verify        answers the JSON token/verify answers (VERIFY_BODY); with VERIFY_WORK, after
 *                       token/verify's own work: the body read and parsed, the Bearer API key's
 *                       SHA-256 looked up in a map, the JWT verified (Tollgate's HMAC codec: issuer,
 *                       audience, expiry), 401 for an unknown key and valid:false for a bad token
 *   BARE_PORT           the same POST /verify, with the same work, on a bare node:http server in
 *                       this process (no Express): the platform's own limit for that work
 *   POST /argon2/verify argon2id verify of a fixed hash with Tollgate's parameters
 *   POST /argon2/hash   argon2id hash with Tollgate's parameters
 *   POST /pg/:n         n sequential round trips to PostgreSQL with plain `pg`
 *   POST /refresh       token/refresh's database work with plain `pg`: the Bearer API key looked up
 *                       as /verify does, the refresh token's SHA-256, then the same two statements
 *                       as Tollgate's rotation (REFRESH_TOKEN_SQL, named: the look-up by hash and
 *                       the one-statement rotation), answering a new refresh token (401 for an
 *                       unknown key, 401 invalid_refresh_token when the token is not live)
 *   POST /webhooks/post {url, secret, count, concurrency, body}
 *                       a bare loop POSTing `count` webhook requests, `concurrency` at a time, with
 *                       node:http and a new connection each (as Tollgate's transport), each body's
 *                       `id` and `created` fresh and signed afresh by the spec's recipe; answers
 *                       once every request was answered
 *   POST /usage/setup   {projectId, meterIds: {key: id}}: what /usage/events writes (workload 11)
 *   POST /usage/events  Tollgate's POST usage/events body ({events: [{id, subject, meter, value?}]}):
 *                       its rows inserted into bench_usage_events (a table like usage_events, made
 *                       by workload 11) with one multi-row INSERT
 */
import argon2 from 'argon2';
import express from 'express';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { ARGON2_PARAMS } from '../infrastructure/crypto/argon2-password-hasher';
import { HmacAccessTokenCodec } from '../infrastructure/crypto/hmac-access-token-codec';
import { REFRESH_TOKEN_SQL, rotationParams } from '../infrastructure/persistence/postgres-refresh-token.store';

const port = Number(process.env.PORT ?? 0);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX ?? 10) });
const password = 'correct horse 1';
const hash = await argon2.hash(password, { ...ARGON2_PARAMS });
const verifyBody = JSON.parse(process.env.VERIFY_BODY ?? '{"valid":true}') as unknown;

/** token/verify's work without Tollgate around it (VERIFY_WORK: the bench project's key, signing secret, id and issuer). */
const work = process.env.VERIFY_WORK
  ? (JSON.parse(process.env.VERIFY_WORK) as { apiKey: string; signingSecret: string; projectId: string; issuer: string })
  : null;
const keys = new Map<string, { projectId: string; secret: Buffer }>();
if (work) keys.set(createHash('sha256').update(work.apiKey).digest('hex'), { projectId: work.projectId, secret: Buffer.from(work.signingSecret, 'base64url') });
const codec = new HmacAccessTokenCodec(work?.issuer ?? '');
const INVALID_KEY = { error: 'Invalid API key', code: 'invalid_api_key' };
const NOT_VALID = { valid: false, user: null, expiresAt: null };

async function verifyWork(authorization: string | undefined, body: unknown): Promise<{ status: number; body: unknown }> {
  if (!work) return { status: 200, body: verifyBody };
  const key = authorization?.startsWith('Bearer ') ? keys.get(createHash('sha256').update(authorization.slice(7)).digest('hex')) : undefined;
  if (!key) return { status: 401, body: INVALID_KEY };
  const token = (body as { token?: unknown } | null)?.token;
  if (typeof token !== 'string') return { status: 400, body: { error: 'Invalid request', code: 'invalid_request' } };
  const verified = await codec.verify(token, key.secret, key.projectId, new Date());
  return verified ? { status: 200, body: verifyBody } : { status: 200, body: NOT_VALID };
}

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '100kb' }));
app.get('/ready', (_req, res) => {
  res.json({ ok: true });
});
app.post('/verify', async (req, res) => {
  const answer = await verifyWork(req.headers.authorization, req.body);
  res.status(answer.status).json(answer.body);
});

if (process.env.BARE_PORT) {
  // The same endpoint on node:http alone: read the body, parse it, do the work, answer the JSON.
  http
    .createServer((req, res) => {
      if (req.method !== 'POST' || req.url !== '/verify') {
        res.writeHead(404).end();
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        let body: unknown = null;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          // answered as a body without a token
        }
        const answer = await verifyWork(req.headers.authorization, body);
        const text = JSON.stringify(answer.body);
        res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
      });
    })
    .listen(Number(process.env.BARE_PORT), '127.0.0.1');
}
app.post('/argon2/verify', async (_req, res) => {
  res.json({ ok: await argon2.verify(hash, password) });
});
app.post('/argon2/hash', async (req, res) => {
  res.json({ ok: (await argon2.hash(String(req.body?.password ?? password), { ...ARGON2_PARAMS })).length > 0 });
});
app.post('/pg/:n', async (req, res) => {
  const n = Number(req.params.n);
  const client = await pool.connect();
  try {
    for (let i = 0; i < n; i++) await client.query('select $1::int as i', [i]);
  } finally {
    client.release();
  }
  res.json({ ok: true });
});
/** `?` placeholders as plain pg numbers them. */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};
const FIND_BY_HASH = numbered(REFRESH_TOKEN_SQL.findByHash);
const ROTATE = numbered(REFRESH_TOKEN_SQL.rotate);
const SUCCESSOR = 'x'.repeat(600); // about the length of an encrypted successor pair
app.post('/refresh', async (req, res) => {
  const authorization = req.headers.authorization;
  const key = authorization?.startsWith('Bearer ') ? keys.get(createHash('sha256').update(authorization.slice(7)).digest('hex')) : undefined;
  if (!key) return res.status(401).json(INVALID_KEY);
  const token = (req.body as { refresh_token?: unknown }).refresh_token;
  if (typeof token !== 'string') return res.status(400).json({ error: 'Invalid request', code: 'invalid_request' });
  const tokenHash = createHash('sha256').update(token).digest('hex');
  const found = await pool.query({ name: 'refresh_token_by_hash', text: FIND_BY_HASH, values: [tokenHash, key.projectId] });
  const row = found.rows[0] as { rotated_at: Date | null; revoked_at: Date | null } | undefined;
  const invalid = { error: 'Invalid refresh token', code: 'invalid_refresh_token' };
  if (!row || row.rotated_at !== null || row.revoked_at !== null) return res.status(401).json(invalid);
  const now = new Date();
  const child = `rt_${randomBytes(32).toString('base64url')}`;
  const params = rotationParams({
    projectId: key.projectId,
    tokenHash,
    at: now,
    childId: randomUUID(),
    childTokenHash: createHash('sha256').update(child).digest('hex'),
    childIdleExpiresAt: new Date(now.getTime() + 86_400_000),
    successorEncrypted: SUCCESSOR,
  });
  const rotated = await pool.query({ name: 'refresh_token_rotate', text: ROTATE, values: params });
  if (rotated.rows.length !== 1) return res.status(401).json(invalid);
  res.json({ token: 'eyJ.baseline.token', refresh_token: child });
});
let usage: { projectId: string; meterIds: Record<string, string> } = { projectId: '', meterIds: {} };
app.post('/usage/setup', (req, res) => {
  usage = req.body as typeof usage;
  res.json({ ok: true });
});
app.post('/usage/events', async (req, res) => {
  const events = (req.body as { events: Array<{ id: string; subject: { type: string; id: string }; meter: string; value?: number }> }).events;
  const now = new Date();
  const windowStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const params: unknown[] = [];
  const rows = events.map((e) => {
    const at = params.length;
    params.push(usage.projectId, e.id, e.subject.type, e.subject.id, usage.meterIds[e.meter], e.value ?? 1, now, windowStart, now);
    return `(${Array.from({ length: 9 }, (_, i) => `$${at + i + 1}`).join(', ')})`;
  });
  const inserted = await pool.query(
    `insert into bench_usage_events (project_id, event_id, subject_kind, subject_id, meter_id, value, occurred_at, window_start, created_at)
     values ${rows.join(', ')} on conflict (project_id, event_id) do nothing`,
    params,
  );
  res.json({ accepted: inserted.rowCount ?? 0, duplicates: events.length - (inserted.rowCount ?? 0) });
});
app.post('/webhooks/post', async (req, res) => {
  const { url, secret, count, concurrency, body } = req.body as {
    url: string;
    secret: string;
    count: number;
    concurrency: number;
    body: Record<string, unknown>;
  };
  const target = new URL(url);
  let next = 0;
  let failed = 0;
  const postOne = () =>
    new Promise<void>((resolve) => {
      const id = randomUUID();
      const raw = JSON.stringify({ ...body, id, created: new Date().toISOString() });
      const timestamp = Date.now();
      const signature = `v1=${createHmac('sha256', secret).update(`${timestamp}.${raw}`, 'utf8').digest('hex')}`;
      const request = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent: false,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Tollgate-Webhooks/1',
            'webhook-id': id,
            'x-service-timestamp': String(timestamp),
            'x-service-signature': signature,
            'content-length': Buffer.byteLength(raw),
          },
        },
        (answer) => {
          if (answer.statusCode !== 200) failed++;
          answer.resume().on('end', resolve).on('error', resolve);
        },
      );
      request.on('error', () => {
        failed++;
        resolve();
      });
      request.end(raw);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        await postOne();
      }
    }),
  );
  res.json({ ms: performance.now() - started, failed });
});
const server = app.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : port });
});
process.on('SIGTERM', () => {
  server.close();
  void pool.end().then(() => process.exit(0));
});
