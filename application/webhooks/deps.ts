import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Logger } from '../ports/logger';
import type { Outbox, OutboxRetryNow } from '../ports/outbox';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../stores/project.store';
import type { NotifyEndpointDisabled } from './endpoint-disabled-mail';
import type { WebhookSettings, WebhookSigner, WebhookTransport } from './ports';
import type { WebhookDeliveryStore, WebhookEndpointStore } from './webhook.store';

/** Everything the webhook use cases may ask for; each takes the part it needs (`Pick`). */
export interface WebhookDeps {
  endpoints: WebhookEndpointStore;
  deliveries: WebhookDeliveryStore;
  outbox: Outbox & OutboxRetryNow;
  transport: WebhookTransport;
  signer: WebhookSigner;
  projects: Pick<ProjectStore, 'findById'>;
  uow: UnitOfWork;
  clock: Clock;
  crypto: Pick<TokenCrypto, 'uuid' | 'randomToken'>;
  logger: Logger;
  settings: WebhookSettings;
  /** Mails the project's owners when an endpoint is disabled; null where no mail can be sent. */
  notifyDisabled: NotifyEndpointDisabled | null;
  /** The W3C `traceparent` of the request being served (null outside one), carried by each delivery's outbox message. */
  traceparent?: () => string | null;
}
