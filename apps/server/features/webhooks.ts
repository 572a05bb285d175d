import type { EventPublisher } from '../../../application/billing/billing.store';
import { handleTopicInBatches, type TopicHandler } from '../../../application/ports/outbox';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import type { WebhookDeps } from '../../../application/webhooks/deps';
import { makeDeliverWebhooks } from '../../../application/webhooks/deliver-webhook';
import { makeListDeliveries, makeReplayFailed, makeResendDelivery, makeRetryDeliveryNow } from '../../../application/webhooks/deliveries';
import { makeCreateEndpoint, makeDeleteEndpoint, makeListEndpoints, makeRollSecret, makeUpdateEndpoint } from '../../../application/webhooks/manage-endpoints';
import { makeNotifyEndpointDisabled } from '../../../application/webhooks/endpoint-disabled-mail';
import { WEBHOOK_DELIVERY_TOPIC } from '../../../application/webhooks/ports';
import { WebhookFanOut } from '../../../application/webhooks/publish-event';
import { makeSendTest } from '../../../application/webhooks/send-test';
import type { WebhookUseCases } from '../../../application/webhooks/use-cases';
import { makeProjectOwners } from '../../../application/console/project-owners';
import { HmacWebhookSigner } from '../../../infrastructure/webhooks/hmac-webhook-signer';
import { HttpWebhookTransport } from '../../../infrastructure/webhooks/http-webhook-transport';
import { countedDeliveries } from '../../../infrastructure/metrics/counted-webhook-transport';
import { currentTraceparent } from '../../../infrastructure/tracing/request-scope';
import { webhookSettings, type CoreConfig } from '../config';
import type { Core } from '../core';
import { makeAdminWebhookRoutes } from '../http/admin-webhooks.routes';
import { CONSOLE_PATH, type ConsoleAccounts } from './console';
import type { Feature } from './types';

export interface WebhooksFeatureInput {
  core: Core;
  config: CoreConfig;
  /** The console's check that an account may see a project, which every webhook admin route asks first. */
  console: Pick<ConsoleAccounts, 'projectAccess'>;
}

export interface WebhooksFeature extends Feature {
  useCases: WebhookUseCases;
  /** The console's Webhooks pages (contract/admin/webhooks.contract.ts). */
  adminRoutes: { webhooks: ReturnType<typeof makeAdminWebhookRoutes> };
  /** The delivery handler (`webhooks.deliver`). */
  handlers: TopicHandler[];
  /** `webhooks.fail-orphans`: the clean-up of deliveries no job will attempt. */
  schedules: ScheduledJob[];
  /** Closes the transport's kept-alive connections. */
  close: () => void;
}

/** A pending delivery whose message ended this long ago without settling it is failed (its worker died on the last attempt). */
const ORPHAN_AFTER_MS = 10 * 60_000;

function webhookDeps({ core, config }: Pick<WebhooksFeatureInput, 'core' | 'config'>, transport: HttpWebhookTransport): WebhookDeps {
  const { db, clock, crypto, logger, outbox, stores } = core;
  return {
    endpoints: stores.webhooks.endpoints,
    deliveries: stores.webhooks.deliveries,
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
      owners: makeProjectOwners(stores.console),
      projects: stores.projects,
      outbox,
      logger,
      consoleUrl: (projectId) => `${config.publicUrl}${CONSOLE_PATH}/projects/${projectId}/webhooks`,
    }),
  };
}

/**
 * Billing's event publisher, wrapped so that each new event also records its deliveries to the
 * project's endpoints, in the same transaction (billing's wiring uses this as `deps.events`). It
 * reads only the core's stores, outbox and crypto.
 */
export function webhookEventPublisher(
  { core }: Pick<WebhooksFeatureInput, 'core'> & Partial<Pick<WebhooksFeatureInput, 'config'>>,
  inner: EventPublisher,
): EventPublisher {
  const { stores, outbox, db, crypto } = core;
  return new WebhookFanOut(inner, {
    endpoints: stores.webhooks.endpoints,
    deliveries: stores.webhooks.deliveries,
    outbox,
    uow: db,
    crypto,
    traceparent: currentTraceparent,
  });
}

/**
 * Project webhooks: endpoints and their secrets, the Test action, the delivery log, resend and
 * replay (the CLI's and the console's), and the delivery of events as outbox jobs on their own
 * queue.
 */
export function wireWebhooks(input: WebhooksFeatureInput): WebhooksFeature {
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
  return {
    useCases,
    adminRoutes: { webhooks: makeAdminWebhookRoutes({ accounts: input.console, webhooks: useCases }) },
    // Delivery attempts are counted (tollgate_webhook_deliveries_total); the Test action's sends are not.
    handlers: [handleTopicInBatches(WEBHOOK_DELIVERY_TOPIC, makeDeliverWebhooks({ ...deps, transport: countedDeliveries(transport, input.core.metrics) }))],
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
}
