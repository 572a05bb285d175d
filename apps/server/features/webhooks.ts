import type { EventPublisher } from '../../../application/billing/billing.store';
import { handleTopicInBatches } from '../../../application/ports/outbox';
import type { WebhookDeps } from '../../../application/webhooks/deps';
import { makeDeliverWebhooks } from '../../../application/webhooks/deliver-webhook';
import { makeListDeliveries, makeReplayFailed, makeResendDelivery, makeRetryDeliveryNow } from '../../../application/webhooks/deliveries';
import {
  makeCreateEndpoint,
  makeDeleteEndpoint,
  makeListEndpoints,
  makeRollSecret,
  makeUpdateEndpoint,
} from '../../../application/webhooks/manage-endpoints';
import { makeNotifyEndpointDisabled } from '../../../application/webhooks/endpoint-disabled-mail';
import { WEBHOOK_DELIVERY_TOPIC } from '../../../application/webhooks/ports';
import { WebhookFanOut } from '../../../application/webhooks/publish-event';
import { makeSendTest } from '../../../application/webhooks/send-test';
import type { WebhookUseCases } from '../../../application/webhooks/use-cases';
import { makeProjectOwners } from '../../../application/console/project-owners';
import { PostgresConsoleStore } from '../../../infrastructure/persistence/postgres-console.store';
import { PostgresWebhookDeliveryStore, PostgresWebhookEndpointStore } from '../../../infrastructure/persistence/postgres-webhook.store';
import { HmacWebhookSigner } from '../../../infrastructure/webhooks/hmac-webhook-signer';
import { HttpWebhookTransport } from '../../../infrastructure/webhooks/http-webhook-transport';
import { webhookSettings, type CoreConfig } from '../config';
import { CONSOLE_PATH } from '../console';
import type { Core } from '../core';
import type { JobsFeature } from './types';

export interface WebhooksFeature {
  useCases: WebhookUseCases;
  /** The delivery handler (`webhooks.deliver`) and the clean-up of deliveries no job will attempt. */
  jobs: JobsFeature;
}

/** A pending delivery whose message ended this long ago without settling it is failed (its worker died on the last attempt). */
const ORPHAN_AFTER_MS = 10 * 60_000;

function webhookDeps({ core, config }: { core: Core; config: CoreConfig }, transport: HttpWebhookTransport = new HttpWebhookTransport()): WebhookDeps {
  const { db, clock, crypto, box, logger, outbox, stores } = core;
  return {
    endpoints: new PostgresWebhookEndpointStore(db, box),
    deliveries: new PostgresWebhookDeliveryStore(db, box),
    outbox,
    transport,
    signer: new HmacWebhookSigner(),
    projects: stores.projects,
    uow: db,
    clock,
    crypto,
    logger,
    settings: webhookSettings(config),
    notifyDisabled: makeNotifyEndpointDisabled({
      owners: makeProjectOwners(new PostgresConsoleStore(db)),
      projects: stores.projects,
      outbox,
      logger,
      consoleUrl: (projectId) => `${config.publicUrl}${CONSOLE_PATH}/projects/${projectId}/webhooks`,
    }),
  };
}

/**
 * Billing's event publisher, wrapped so that each new event also records its deliveries to the
 * project's endpoints, in the same transaction (billing's wiring uses this as `deps.events`).
 */
export function webhookEventPublisher(input: { core: Core; config: CoreConfig }, inner: EventPublisher): EventPublisher {
  return new WebhookFanOut(inner, webhookDeps(input));
}

/**
 * Project webhooks: endpoints and their secrets, the Test action, the delivery log, resend and
 * replay (the CLI's and, later, the dashboard's), and the delivery of events as outbox jobs on
 * their own queue.
 */
export function wireWebhooks(input: { core: Core; config: CoreConfig }): WebhooksFeature {
  // One transport for the feature: its kept-alive connections serve the deliveries and the Test action.
  const transport = new HttpWebhookTransport();
  const deps = webhookDeps(input, transport);
  const useCases: WebhookUseCases = {
    createEndpoint: makeCreateEndpoint(deps),
    listEndpoints: makeListEndpoints(deps),
    updateEndpoint: makeUpdateEndpoint(deps),
    deleteEndpoint: makeDeleteEndpoint(deps),
    rollSecret: makeRollSecret(deps),
    sendTest: makeSendTest(deps),
    listDeliveries: makeListDeliveries(deps),
    resendDelivery: makeResendDelivery(deps),
    retryDeliveryNow: makeRetryDeliveryNow(deps),
    replayFailed: makeReplayFailed(deps),
  };
  const jobs: JobsFeature = {
    handlers: [handleTopicInBatches(WEBHOOK_DELIVERY_TOPIC, makeDeliverWebhooks(deps))],
    schedules: [
      {
        name: 'webhooks.fail-orphans',
        cron: '*/5 * * * *',
        run: async () => {
          const now = deps.clock.now();
          const failed = await deps.deliveries.failOrphans(new Date(now.getTime() - ORPHAN_AFTER_MS), now);
          if (failed > 0) deps.logger.warn({ failed }, 'webhook deliveries failed: no attempt was left for them');
        },
      },
    ],
    close: () => transport.close(),
  };
  return { useCases, jobs };
}
