import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../ports/outbox';
import { aWebhookDelivery, aWebhookEndpoint, CallLog, fakeLogger, fakeSigner, FixedClock, strictFake, strictFn } from '../testing/fakes';
import { DeliveryAttemptFailed, makeDeliverWebhooks } from './deliver-webhook';
import type { NotifyEndpointDisabled } from './endpoint-disabled-mail';
import type { WebhookDeliveryMessage, WebhookResponse, WebhookTransport } from './ports';
import type { FinishedAttempt, OpenedAttempt, SigningSecrets, WebhookDeliveryStore, WebhookEndpoint, WebhookEndpointStore } from './webhook.store';

const NOW = '2030-01-10T12:00:00.000Z';
const DAY_MS = 24 * 3600 * 1000;
const GONE = 'the endpoint answered 410 Gone';
const FAILING = 'failing for 5 days without a successful delivery';

const answered = (status: number): WebhookResponse => ({ kind: 'answered', status, excerpt: `status ${status}`, durationMs: 12 });

interface Options {
  /** What the receiver answers (every attempt of the batch). */
  response?: WebhookResponse;
  /** The outbox attempt of every item (1 for the first). */
  attempt?: number;
  endpoint?: Partial<WebhookEndpoint>;
  /** Null: the endpoint is disabled, nothing is signed. */
  secrets?: SigningSecrets | null;
  /** When the endpoint's failing streak began, as the store answers after recording a failure. */
  failingSince?: Date | null;
  /** What `endpoints.disable` answers (false: another worker disabled it first). */
  disables?: boolean;
  /** Deliveries in the batch (all to the same endpoint); null: gone or no longer pending. */
  deliveries?: Array<string | null>;
}

function setup(options: Options = {}) {
  const log = new CallLog();
  const clock = new FixedClock(NOW);
  const endpoint = aWebhookEndpoint(options.endpoint);
  const secrets = options.secrets === undefined ? { current: 'whsec_current', previous: null } : options.secrets;
  const ids = options.deliveries ?? ['delivery-1'];
  const finished: FinishedAttempt[] = [];
  const deliveries = strictFake<WebhookDeliveryStore>(
    'deliveries',
    {
      beginAttempts: async (attempts) =>
        attempts.map(({ deliveryId }, i): OpenedAttempt | null =>
          ids[i] === null ? null : { delivery: aWebhookDelivery({ id: deliveryId }), endpoint, attempt: options.attempt ?? 1, secrets },
        ),
      finishAttempts: async (attempts) => {
        finished.push(...attempts);
        const failed = attempts.filter((a) => a.streak?.outcome === 'failed').map((a) => a.streak!.endpointId);
        return new Map(failed.map((id) => [id, options.failingSince ?? clock.now()]));
      },
    },
    log,
  );
  const endpoints = strictFake<WebhookEndpointStore>('endpoints', { disable: async () => options.disables ?? true }, log);
  const transport = strictFake<WebhookTransport>('transport', { send: async () => options.response ?? answered(200) }, log);
  const notifyDisabled = strictFn<NotifyEndpointDisabled>('notifyDisabled', log, async () => undefined);
  const logger = fakeLogger();
  const deliver = makeDeliverWebhooks({
    endpoints,
    deliveries,
    signer: fakeSigner(),
    transport,
    clock,
    logger,
    settings: { allowPrivateUrls: false, timeoutMs: 10_000 },
    notifyDisabled,
  });
  const items: Array<BatchItem<WebhookDeliveryMessage>> = ids.map((id, i) => ({
    payload: { deliveryId: id ?? `delivery-gone-${i}` },
    context: { messageId: `msg-${i + 1}`, attempt: options.attempt ?? 1, signal: new AbortController().signal },
  }));
  return { deliver: () => deliver(items), log, clock, endpoint, finished, logger };
}

const at = (ms: number) => new Date(Date.parse(NOW) + ms);

describe('delivering a webhook attempt', () => {
  it('a 2xx answer: the delivery succeeds, the failing streak ends, nothing is retried or disabled', async () => {
    const { deliver, log, finished } = setup({ response: answered(204) });
    expect(await deliver()).toEqual([null]);
    expect(finished).toEqual([
      {
        result: expect.objectContaining({
          deliveryId: 'delivery-1',
          attempt: 1,
          statusCode: 204,
          status: 'succeeded',
          completedAt: at(0),
          nextAttemptAt: null,
        }),
        streak: { endpointId: 'endpoint-1', outcome: 'succeeded', at: at(0) },
      },
    ]);
    expect(log.names('endpoints')).toEqual([]);
    expect(log.names('notifyDisabled')).toEqual([]);
  });

  it('signs each attempt now with the current secret and, after a roll, the previous one too', async () => {
    const { deliver, log } = setup({ secrets: { current: 'whsec_new', previous: 'whsec_old' } });
    await deliver();
    const [request] = log.of('transport.send')[0]!.args as [{ url: string; headers: Record<string, string>; timeoutMs: number; allowPrivate: boolean }];
    expect(request.url).toBe('https://hooks.example.com/tollgate');
    expect(request.headers['x-service-signature']).toBe('v1=hmac(whsec_new) v1=hmac(whsec_old)');
    expect(request.headers['webhook-id']).toBe('event-1');
    expect(request.headers['x-service-timestamp']).toBe(String(Date.parse(NOW)));
    expect(request).toMatchObject({ timeoutMs: 10_000, allowPrivate: false });
  });
});

describe('the retry schedule', () => {
  it.each([
    [1, 5],
    [2, 5 * 60],
    [3, 30 * 60],
    [4, 2 * 3600],
    [5, 5 * 3600],
    [6, 10 * 3600],
    [7, 10 * 3600],
    [8, 24 * 3600],
    [9, 24 * 3600],
  ])('failed attempt %i: the delivery stays pending and the next attempt is due %i s later; the outbox is told to retry', async (attempt, seconds) => {
    const { deliver, finished } = setup({ response: answered(500), attempt });
    const [outcome] = await deliver();
    expect(outcome).toBeInstanceOf(DeliveryAttemptFailed);
    expect(outcome!.message).toBe('answered 500');
    expect(finished[0]!.result).toMatchObject({ attempt, statusCode: 500, status: 'pending', completedAt: null, nextAttemptAt: at(seconds * 1000) });
    expect(finished[0]!.streak).toEqual({ endpointId: 'endpoint-1', outcome: 'failed', at: at(0) });
  });

  it('the 10th failed attempt is the last: the delivery fails for good, with no next attempt', async () => {
    const { deliver, finished } = setup({ response: answered(503), attempt: 10 });
    const [outcome] = await deliver();
    expect(outcome).toBeInstanceOf(DeliveryAttemptFailed);
    expect(finished[0]!.result).toMatchObject({ attempt: 10, status: 'failed', completedAt: at(0), nextAttemptAt: null });
  });

  it('a redirect, a network failure and a refused destination are failures like a 5xx', async () => {
    const cases: Array<[WebhookResponse, string]> = [
      [answered(302), 'answered 302'],
      [{ kind: 'failed', error: 'connect ECONNREFUSED', durationMs: 3 }, 'connect ECONNREFUSED'],
      [{ kind: 'refused', error: 'webhook_url_private', detail: 'resolves to 10.0.0.5 (private)', durationMs: 1 }, 'not sent: resolves to 10.0.0.5 (private)'],
    ];
    for (const [response, message] of cases) {
      const { deliver, finished } = setup({ response });
      const [outcome] = await deliver();
      expect(outcome?.message).toBe(message);
      expect(finished[0]!.result).toMatchObject({ status: 'pending', nextAttemptAt: at(5000) });
    }
  });
});

describe('disabling an endpoint', () => {
  it('410 Gone: the delivery fails without a retry, the endpoint is disabled with that reason and its project owners are mailed', async () => {
    const { deliver, log, finished, endpoint, logger } = setup({ response: answered(410), attempt: 3 });
    expect(await deliver()).toEqual([null]);
    expect(finished).toEqual([{ result: expect.objectContaining({ statusCode: 410, status: 'failed', completedAt: at(0), nextAttemptAt: null }) }]);
    expect(log.of('endpoints.disable').map((c) => c.args)).toEqual([['endpoint-1', GONE, at(0)]]);
    expect(log.of('notifyDisabled').map((c) => c.args)).toEqual([[endpoint, GONE, at(0)]]);
    expect(logger.lines).toEqual([expect.objectContaining({ level: 'warn', msg: 'webhook endpoint disabled: it answered 410 Gone' })]);
  });

  it('two deliveries of one batch answered 410 by the same endpoint disable it once', async () => {
    const { deliver, log } = setup({ response: answered(410), deliveries: ['delivery-1', 'delivery-2'] });
    expect(await deliver()).toEqual([null, null]);
    expect(log.names('endpoints.disable')).toHaveLength(1);
    expect(log.names('notifyDisabled')).toHaveLength(1);
  });

  it('an endpoint another worker disabled first is not mailed about again', async () => {
    const { deliver, log } = setup({ response: answered(410), disables: false });
    await deliver();
    expect(log.names('endpoints.disable')).toHaveLength(1);
    expect(log.names('notifyDisabled')).toEqual([]);
  });

  it('a failure 5 days after the first failure since the last success disables the endpoint, and the owners are mailed', async () => {
    const { deliver, log, endpoint } = setup({ response: answered(500), attempt: 4, failingSince: at(-5 * DAY_MS) });
    const [outcome] = await deliver();
    // The attempt still failed: the outbox records it, and no further attempt finds the endpoint enabled.
    expect(outcome).toBeInstanceOf(DeliveryAttemptFailed);
    expect(log.of('endpoints.disable').map((c) => c.args)).toEqual([['endpoint-1', FAILING, at(0)]]);
    expect(log.of('notifyDisabled').map((c) => c.args)).toEqual([[endpoint, FAILING, at(0)]]);
  });

  it('a failure 1 ms short of 5 days of failing leaves the endpoint enabled', async () => {
    const { deliver, log } = setup({ response: answered(500), failingSince: at(-5 * DAY_MS + 1) });
    await deliver();
    expect(log.names('endpoints')).toEqual([]);
    expect(log.names('notifyDisabled')).toEqual([]);
  });

  it('a success ends the streak whatever its age: no endpoint is disabled on a 2xx', async () => {
    const { deliver, log } = setup({ response: answered(200), failingSince: at(-30 * DAY_MS) });
    await deliver();
    expect(log.names('endpoints')).toEqual([]);
  });

  it('a disabled endpoint is sent nothing: the delivery fails at once, without a retry, saying why', async () => {
    const { deliver, log, finished } = setup({ secrets: null, endpoint: { enabled: false, disabledReason: GONE } });
    expect(await deliver()).toEqual([null]);
    expect(log.names('transport')).toEqual([]);
    expect(finished[0]!.result).toMatchObject({
      status: 'failed',
      nextAttemptAt: null,
      statusCode: null,
      error: `not sent: the endpoint is disabled: ${GONE}`,
    });
    expect(finished[0]!.streak).toBeUndefined();
  });

  it('a delivery deleted, or no longer pending, is neither sent nor recorded', async () => {
    const { deliver, log, finished } = setup({ deliveries: [null] });
    expect(await deliver()).toEqual([null]);
    expect(log.names('transport')).toEqual([]);
    expect(finished).toEqual([]);
  });
});
