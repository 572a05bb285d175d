import { parseDescription, parseEventSelection, parseWebhookUrl, type WebhookSelection } from '../../domain/webhooks/endpoint';
import { secretDisplayPrefix } from '../../domain/webhooks/signature';
import { isUuid } from '../../domain/ids';
import type { WebhookDeps } from './deps';
import { newSecret, PREVIOUS_SECRET_TTL_MS } from './sign-delivery';
import { endpointView, type EndpointView } from './views';
import { err, ok, type Result } from '../../domain/result';
import type { EndpointFieldRefusal, EndpointNotFound } from './errors';
import type { DestinationRefusal } from './ports';
import type { WebhookEndpoint } from './webhook.store';

export interface EndpointInput {
  url: string;
  /** Event type names; none (or all five): every type. */
  eventTypes?: readonly string[];
  description?: string;
}

export interface EndpointChanges {
  url?: string;
  eventTypes?: readonly string[];
  description?: string;
  enabled?: boolean;
}

type ManageDeps = Pick<WebhookDeps, 'endpoints' | 'projects' | 'transport' | 'clock' | 'crypto' | 'settings'>;

/**
 * The URL as it will be stored, once its rules pass and its host resolves to addresses deliveries
 * may reach (every address: one private answer among public ones refuses it).
 */
async function checkedUrl(deps: ManageDeps, url: string): Promise<Result<string, DestinationRefusal>> {
  const allow = deps.settings.allowPrivateUrls;
  const parsed = parseWebhookUrl(url, { allowHttp: allow });
  if (!parsed.ok) return parsed;
  const destination = await deps.transport.check(parsed.value.href, allow);
  if (!destination.ok) return err(destination.error, destination.detail);
  return ok(parsed.value.href);
}

function eventTypesOf(types: readonly string[] | undefined): Result<WebhookSelection[], 'invalid_webhook_events'> {
  const selection = parseEventSelection(types ?? []);
  return selection === null ? err('invalid_webhook_events') : ok(selection);
}

async function projectExists(deps: Pick<WebhookDeps, 'projects'>, projectId: string): Promise<boolean> {
  return isUuid(projectId) && (await deps.projects.findById(projectId)) !== null;
}

/** The endpoint of the project, or the refusal. */
export async function findEndpoint(
  deps: Pick<WebhookDeps, 'endpoints' | 'projects'>,
  projectId: string,
  endpointId: string,
): Promise<Result<WebhookEndpoint, EndpointNotFound>> {
  if (!(await projectExists(deps, projectId))) return err('project_not_found');
  const endpoint = isUuid(endpointId) ? await deps.endpoints.get(projectId, endpointId) : null;
  return endpoint ? ok(endpoint) : err('webhook_endpoint_not_found');
}

export type CreateEndpointError = 'project_not_found' | EndpointFieldRefusal;

/** Registers an endpoint; its signing secret is answered now and never again. */
export function makeCreateEndpoint(deps: ManageDeps) {
  return async (projectId: string, input: EndpointInput): Promise<Result<{ endpoint: EndpointView; secret: string }, CreateEndpointError>> => {
    if (!(await projectExists(deps, projectId))) return err('project_not_found');
    const types = eventTypesOf(input.eventTypes);
    if (!types.ok) return types;
    const description = parseDescription(input.description ?? '');
    if (description === null) return err('invalid_webhook_description');
    const url = await checkedUrl(deps, input.url);
    if (!url.ok) return url;
    const now = deps.clock.now();
    const secret = newSecret(deps);
    const endpoint: WebhookEndpoint = {
      id: deps.crypto.uuid(),
      projectId,
      url: url.value,
      eventTypes: types.value,
      description,
      enabled: true,
      disabledReason: null,
      secretPrefix: secretDisplayPrefix(secret),
      failingSince: null,
      lastSuccessAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await deps.endpoints.insert(endpoint, secret);
    return ok({ endpoint: endpointView(endpoint), secret });
  };
}

export function makeListEndpoints(deps: Pick<WebhookDeps, 'endpoints' | 'projects'>) {
  return async (projectId: string): Promise<Result<EndpointView[], 'project_not_found'>> => {
    if (!(await projectExists(deps, projectId))) return err('project_not_found');
    return ok((await deps.endpoints.list(projectId)).map(endpointView));
  };
}

export type UpdateEndpointError = EndpointNotFound | EndpointFieldRefusal;

/**
 * Changes an endpoint's URL (checked again), event types, description or enabled flag. Enabling
 * clears Tollgate's reason for disabling it and starts a new failing streak.
 */
export function makeUpdateEndpoint(deps: ManageDeps) {
  return async (projectId: string, endpointId: string, changes: EndpointChanges): Promise<Result<EndpointView, UpdateEndpointError>> => {
    const found = await findEndpoint(deps, projectId, endpointId);
    if (!found.ok) return found;
    const next: WebhookEndpoint = { ...found.value };
    if (changes.eventTypes !== undefined) {
      const types = eventTypesOf(changes.eventTypes);
      if (!types.ok) return types;
      next.eventTypes = types.value;
    }
    if (changes.description !== undefined) {
      const description = parseDescription(changes.description);
      if (description === null) return err('invalid_webhook_description');
      next.description = description;
    }
    if (changes.url !== undefined) {
      const url = await checkedUrl(deps, changes.url);
      if (!url.ok) return url;
      next.url = url.value;
    }
    if (changes.enabled !== undefined && changes.enabled !== next.enabled) {
      next.enabled = changes.enabled;
      next.disabledReason = null;
      if (changes.enabled) next.failingSince = null;
    }
    next.updatedAt = deps.clock.now();
    if (!(await deps.endpoints.update(next))) return err('webhook_endpoint_not_found');
    return ok(endpointView(next));
  };
}

/** Deletes an endpoint, its deliveries and their log; pending attempts find nothing and stop. */
export function makeDeleteEndpoint(deps: Pick<WebhookDeps, 'endpoints' | 'projects'>) {
  return async (projectId: string, endpointId: string): Promise<Result<{ deleted: true }, EndpointNotFound>> => {
    const found = await findEndpoint(deps, projectId, endpointId);
    if (!found.ok) return found;
    if (!(await deps.endpoints.delete(projectId, endpointId))) return err('webhook_endpoint_not_found');
    return ok({ deleted: true as const });
  };
}

export interface RolledSecret {
  endpoint: EndpointView;
  /** Shown now and never again. */
  secret: string;
  /** Until then the old secret signs beside the new one. */
  previousSecretValidUntil: Date;
}

/**
 * Issues a new signing secret, answered now and never again. For a day the old secret signs too (a
 * second `v1=` in the signature header), so receivers can switch without refusing deliveries.
 */
export function makeRollSecret(deps: Pick<WebhookDeps, 'endpoints' | 'projects' | 'clock' | 'crypto'>) {
  return async (projectId: string, endpointId: string): Promise<Result<RolledSecret, EndpointNotFound>> => {
    const found = await findEndpoint(deps, projectId, endpointId);
    if (!found.ok) return found;
    const now = deps.clock.now();
    const secret = newSecret(deps);
    const until = new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS);
    const rolled = await deps.endpoints.rollSecret(projectId, endpointId, secret, until, now);
    if (!rolled) return err('webhook_endpoint_not_found');
    return ok({ endpoint: endpointView(rolled), secret, previousSecretValidUntil: until });
  };
}
