import { DEFAULT_CURRENCY, parseCurrency } from '../../domain/billing/money';
import { type Result, err, ok } from '../../domain/result';
import type { BillingConnection } from './billing.store';
import { pushCatalog } from './catalog-sync';
import type { BillingDeps } from './deps';
import { type RequestFailureCode, refuseFailure } from './errors';
import type { ConnectInput } from './requests';
import type { ConnectionView } from './views';

export type ConnectionDeps = Pick<BillingDeps, 'connections' | 'processors' | 'projects' | 'catalog' | 'customers' | 'uow' | 'clock' | 'settings'>;

const SECRET_KEY = /^(sk|rk)_(test|live)_[A-Za-z0-9]{8,247}$/;
const PUBLISHABLE_KEY = /^pk_(test|live)_[A-Za-z0-9]{8,247}$/;
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=]{8,247}$/;

/** What connecting can answer besides the connection: a bad key or currency, the sandbox off, Stripe refusing the key or the catalog. */
export type ConnectBillingError =
  | 'project_not_found'
  | 'invalid_currency'
  | 'sandbox_unavailable'
  | 'invalid_secret_key'
  | 'invalid_publishable_key'
  | 'invalid_webhook_secret'
  | 'processor_rejected_key'
  | RequestFailureCode;

const modeOfKey = (key: string): 'test' | 'live' => (key.includes('_live_') ? 'live' : 'test');

export function connectionView(c: BillingConnection, publicUrl: string): ConnectionView {
  return {
    processor: c.processor,
    connected: true,
    keyLast4: c.keyLast4,
    mode: c.processor === 'sandbox' ? 'sandbox' : c.livemode ? 'live' : 'test',
    accountId: c.accountId,
    publishableKey: c.publishableKey,
    currency: c.currency,
    connectedAt: c.connectedAt,
    webhookUrl: c.processor === 'stripe' ? `${publicUrl}/api/webhooks/stripe/${c.projectId}` : null,
  };
}

/**
 * Connects a project's billing to Stripe or to the sandbox. Stripe's keys are checked by their
 * shape, then by a call to Stripe (a refused key answers 400 with Stripe's reason and nothing is
 * stored); they are stored encrypted and never shown again (only the secret key's last 4). The
 * catalog is then pushed to the processor (plans as Products, active prices as Prices).
 */
export function makeConnectBilling(deps: ConnectionDeps) {
  return async function connectBilling(projectId: string, input: ConnectInput): Promise<Result<ConnectionView, ConnectBillingError>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const currency = input.currency === undefined ? DEFAULT_CURRENCY : parseCurrency(input.currency);
    if (currency === null) return err('invalid_currency');
    const now = deps.clock.now();
    const existing = await deps.connections.get(projectId);
    let connection: BillingConnection;
    if (input.processor === 'sandbox') {
      if (!deps.settings.sandboxAllowed) return err('sandbox_unavailable');
      connection = {
        projectId,
        processor: 'sandbox',
        secretKey: null,
        publishableKey: null,
        webhookSecret: null,
        keyLast4: null,
        livemode: false,
        accountId: null,
        currency,
        connectedAt: existing?.processor === 'sandbox' ? existing.connectedAt : now,
        updatedAt: now,
      };
    } else {
      const secretKey = input.secretKey.trim();
      const publishableKey = input.publishableKey.trim();
      const webhookSecret = input.webhookSecret.trim();
      if (!SECRET_KEY.test(secretKey)) return err('invalid_secret_key');
      if (!PUBLISHABLE_KEY.test(publishableKey) || modeOfKey(publishableKey) !== modeOfKey(secretKey)) return err('invalid_publishable_key');
      if (!WEBHOOK_SECRET.test(webhookSecret)) return err('invalid_webhook_secret');
      connection = {
        projectId,
        processor: 'stripe',
        secretKey,
        publishableKey,
        webhookSecret,
        keyLast4: secretKey.slice(-4),
        livemode: modeOfKey(secretKey) === 'live',
        accountId: null,
        currency,
        connectedAt: now,
        updatedAt: now,
      };
      const verified = await deps.processors.forConnection(connection).verifyCredentials();
      if (!verified.ok) {
        if (verified.failure.kind === 'unavailable') return refuseFailure(verified.failure);
        return err('processor_rejected_key', `Stripe refused the secret key: ${verified.failure.message}`);
      }
      connection = { ...connection, accountId: verified.value.accountId, livemode: verified.value.livemode };
    }
    const next = connection;
    await deps.uow.transaction(async () => {
      if (next.processor === 'stripe' && !sameStripeAccount(existing, next)) await forgetStripeObjects(deps, projectId, now);
      await deps.connections.save(next);
    });
    const pushed = await pushCatalog(deps, connection, deps.processors.forConnection(connection));
    if (!pushed.ok) return refuseFailure(pushed.failure);
    return ok(connectionView(connection, deps.settings.publicUrl));
  };
}

/**
 * Whether a Stripe connection reaches the same objects as the one it replaces: the same account in
 * the same mode (test and live mode of one account hold different objects). A new key, restricted
 * key or webhook secret for the same account keeps everything.
 */
function sameStripeAccount(previous: BillingConnection | null, next: BillingConnection): boolean {
  return (
    previous !== null &&
    previous.processor === 'stripe' &&
    previous.accountId !== null &&
    previous.accountId === next.accountId &&
    previous.livemode === next.livemode
  );
}

/**
 * Another Stripe account (test keys replaced by live ones, or another account; or a connection
 * after none, whose account Tollgate cannot compare): the products, prices and customers Tollgate
 * knows there do not exist on it. Their ids are forgotten, so the catalog is pushed again and each
 * customer made again on next need. Subscriptions on the old account keep their records.
 */
async function forgetStripeObjects(deps: Pick<ConnectionDeps, 'catalog' | 'customers'>, projectId: string, now: Date): Promise<void> {
  for (const plan of await deps.catalog.listPlans(projectId)) {
    if (plan.processor === 'stripe') await deps.catalog.updatePlan({ ...plan, processor: null, processorProductId: null, updatedAt: now });
  }
  for (const price of await deps.catalog.listPrices(projectId)) {
    if (price.processor === 'stripe') await deps.catalog.updatePrice({ ...price, processor: null, processorPriceId: null, updatedAt: now });
  }
  await deps.customers.forget(projectId, 'stripe');
}

export function makeBillingStatus(deps: Pick<BillingDeps, 'connections' | 'projects' | 'settings'>) {
  return async function billingStatus(projectId: string): Promise<Result<ConnectionView | null, 'project_not_found'>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const connection = await deps.connections.get(projectId);
    return ok(connection === null ? null : connectionView(connection, deps.settings.publicUrl));
  };
}

/** Forgets the processor and its keys; plans, prices, subscriptions and invoices stay. */
export function makeDisconnectBilling(deps: Pick<BillingDeps, 'connections' | 'projects'>) {
  return async function disconnectBilling(projectId: string): Promise<Result<{ disconnected: boolean }, 'project_not_found'>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    return ok({ disconnected: await deps.connections.remove(projectId) });
  };
}
