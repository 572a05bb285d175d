import type { RenderedEmail } from '../mail/email-message';
import type { Logger } from '../ports/logger';
import { defineTopic, type Outbox } from '../ports/outbox';
import type { ProjectStore } from '../stores/project.store';

/** What the outbox records for the notice that a project's webhook endpoint was disabled. */
export interface EndpointDisabledMail {
  to: string;
  projectName: string;
  endpointUrl: string;
  /** Why, as the endpoint shows it (`the endpoint answered 410 Gone`, `failing for 5 days ...`). */
  reason: string;
  /** ISO 8601. */
  disabledAt: string;
  /** The console's Webhooks page of the project, where the endpoint is enabled again. */
  consoleUrl: string;
}

/** Outbox topic of the notices; the mail queue's retry policy applies. */
export const ENDPOINT_DISABLED_TOPIC = defineTopic<EndpointDisabledMail>({ name: 'email.webhook_endpoint_disabled', queue: 'mail' });

/** Writes the notice as HTML and plain text (English, as the console; every value escaped). */
export interface EndpointDisabledRenderer {
  render(mail: EndpointDisabledMail): RenderedEmail;
}

/** Who hears about a project's webhook endpoints: their email addresses. */
export interface WebhookOwners {
  emailsOf(projectId: string): Promise<string[]>;
}

/** Tells a project's owners that one of its endpoints was disabled; never throws. */
export type NotifyEndpointDisabled = (endpoint: { id: string; projectId: string; url: string }, reason: string, at: Date) => Promise<void>;

/**
 * When Tollgate disables an endpoint (it answered 410 Gone, or failed for 5 days without a
 * success), the people who run the project are mailed, as Stripe and Svix do: otherwise events
 * silently stop reaching them. One mail per owner through the outbox (durable, retried); the
 * dedupe key makes a repeated call for the same disabling send nothing more. A failure to enqueue
 * is logged, never the delivery's failure.
 */
export function makeNotifyEndpointDisabled(deps: {
  owners: WebhookOwners;
  projects: Pick<ProjectStore, 'findById'>;
  outbox: Outbox;
  logger: Logger;
  /** The console's Webhooks page of a project. */
  consoleUrl: (projectId: string) => string;
}): NotifyEndpointDisabled {
  return async (endpoint, reason, at) => {
    try {
      const [project, owners] = await Promise.all([deps.projects.findById(endpoint.projectId), deps.owners.emailsOf(endpoint.projectId)]);
      if (project === null) return;
      for (const to of owners) {
        await deps.outbox.enqueue(
          ENDPOINT_DISABLED_TOPIC,
          { to, projectName: project.name, endpointUrl: endpoint.url, reason, disabledAt: at.toISOString(), consoleUrl: deps.consoleUrl(endpoint.projectId) },
          { dedupeKey: `${endpoint.id}:${at.getTime()}:${to.toLowerCase()}`, subject: endpoint.id },
        );
      }
      if (owners.length === 0)
        deps.logger.warn({ projectId: endpoint.projectId, endpointId: endpoint.id }, 'webhook endpoint disabled: the project has nobody to tell');
    } catch (e) {
      deps.logger.error({ projectId: endpoint.projectId, endpointId: endpoint.id, err: e }, 'webhook endpoint disabled: the notice could not be queued');
    }
  };
}
