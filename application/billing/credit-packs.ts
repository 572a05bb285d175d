import { type CreditPack, type CreditPackInput, validateCreditPack } from '../../domain/usage/credit-pack';
import { SYSTEM_ACTOR } from '../../domain/audit';
import { auditEntry, userTarget } from '../audit/audit-log';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import { type RedirectUrlError, checkRedirectUrl } from '../../domain/billing/redirect';
import { organizationSubject, userSubject } from '../../domain/billing/subject';
import { type Result, err, ok } from '../../domain/result';
import { payerOf, type SubjectError } from './billing-subject';
import { type ConnectedError, connectedProcessor } from './connected-processor';
import type { BillingDeps } from './deps';
import { ensureCustomer, subjectMetadata } from './ensure-customer';
import { type RequestFailureCode, refuseFailure } from './errors';
import { type PaymentProcessor, type ProcessorResult, processorOk } from './payment-processor';
import type { BillingActor } from './requests';

/**
 * Credit packs (docs/usage.md, "Credit packs"): credits of a meter sold for a one-off amount. The
 * operator defines them (console, CLI); a signed-in user buys one for themselves, or for their
 * active organization with org:billing:manage, through the processor's hosted checkout; the paid
 * checkout grants the credits once (the sandbox's page on payment, Stripe's
 * checkout.session.completed), whichever reports it first.
 */

export type CreatePackError = 'project_not_found' | 'invalid_credit_pack' | 'unknown_meter';

export function makeCreateCreditPack(deps: Pick<BillingDeps, 'creditPacks' | 'meteredUsage' | 'projects' | 'clock' | 'crypto'>) {
  return async function createCreditPack(projectId: string, input: CreditPackInput): Promise<Result<CreditPack, CreatePackError>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const terms = validateCreditPack(input);
    if (!terms.ok) return terms;
    if ((await deps.meteredUsage.meter(projectId, terms.value.meterKey)) === null) return err('unknown_meter');
    const pack: CreditPack = { id: deps.crypto.uuid(), projectId, ...terms.value, active: true, createdAt: deps.clock.now() };
    await deps.creditPacks.insert(pack);
    return ok(pack);
  };
}

/** The project's packs, newest first: every one for the operator, the active ones for buyers. */
export function makeListCreditPacks(deps: Pick<BillingDeps, 'creditPacks'>) {
  return (projectId: string, options: { activeOnly: boolean }): Promise<CreditPack[]> => deps.creditPacks.list(projectId, options);
}

/** A pack no longer sold (checkouts already open still grant when paid). */
export function makeArchiveCreditPack(deps: Pick<BillingDeps, 'creditPacks'>) {
  return async function archiveCreditPack(projectId: string, packId: string): Promise<Result<CreditPack, 'credit_pack_not_found'>> {
    const pack = await deps.creditPacks.get(projectId, packId);
    if (pack === null) return err('credit_pack_not_found');
    await deps.creditPacks.setActive(projectId, packId, false);
    return ok({ ...pack, active: false });
  };
}

export type BuyPackError = SubjectError | RedirectUrlError | ConnectedError | RequestFailureCode | 'credit_pack_not_found';

/**
 * POST billing/credit-packs/{id}/checkout: a hosted checkout for one pack, for the user or (with
 * `?for=organization` and org:billing:manage) their active organization. The redirect URLs must be
 * the project's callback URLs or their origins, as a subscription checkout's.
 */
export function makeBuyCreditPack(deps: BillingDeps) {
  return async function buyCreditPack(
    actor: BillingActor,
    packId: string,
    input: { successUrl: string; cancelUrl: string; requestKey: string },
  ): Promise<Result<{ id: string; url: string }, BuyPackError>> {
    const { project, user } = actor;
    const payer = await payerOf(deps, actor, 'manage');
    if (!payer.ok) return payer;
    const pack = await deps.creditPacks.get(project.id, packId);
    if (pack === null || !pack.active) return err('credit_pack_not_found');
    for (const url of [input.successUrl, input.cancelUrl]) {
      const checked = checkRedirectUrl(url, project.settings.callbackUrls);
      if (!checked.ok) return checked;
    }
    const connected = await connectedProcessor(deps, project.id);
    if (!connected.ok) return connected;
    const { connection, processor } = connected.value;
    const customer = await ensureCustomer(deps, connection, processor, payer.value.subject, user);
    if (!customer.ok) return refuseFailure(customer.failure);
    const session = await processor.createPackCheckout({
      customerId: customer.value.customerId,
      name: pack.name,
      amount: pack.amount,
      currency: pack.currency,
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl,
      metadata: { ...subjectMetadata(project.id, payer.value.subject), packId: pack.id },
      email: user.email,
      idempotencyKey: `tollgate-pack-${project.id}-${payer.value.key}-${pack.id}-${input.requestKey}`,
    });
    if (!session.ok) return refuseFailure(session.failure);
    return ok(session.value);
  };
}

/**
 * A one-off checkout reported complete (the sandbox's page, Stripe's webhook): when it is a paid
 * checkout of one of the project's packs, the pack's credits are granted to its buyer, once per
 * checkout. Answers whether this call granted them.
 */
export function makeFulfilPackCheckout(deps: Pick<BillingDeps, 'creditPacks' | 'meteredUsage' | 'clock' | 'crypto' | 'logger' | 'audit'>) {
  return async function fulfilPackCheckout(projectId: string, processor: PaymentProcessor, checkoutId: string): Promise<ProcessorResult<boolean>> {
    const found = await processor.getPackCheckout(checkoutId);
    if (!found.ok) return found;
    const checkout = found.value;
    if (checkout === null || checkout.status !== 'complete' || !checkout.paid || checkout.metadata.packId === undefined) return processorOk(false);
    if (checkout.metadata.projectId !== projectId) return processorOk(false);
    const pack = await deps.creditPacks.get(projectId, checkout.metadata.packId);
    const subject = checkout.metadata.organizationId
      ? organizationSubject(checkout.metadata.organizationId)
      : checkout.metadata.userId
        ? userSubject(checkout.metadata.userId)
        : null;
    if (pack === null || subject === null) {
      deps.logger.warn({ projectId, checkoutId }, 'billing: a paid credit pack checkout names no pack or buyer of the project');
      return processorOk(false);
    }
    const at = deps.clock.now();
    const expiresAt = pack.expiresInDays === null ? null : new Date(at.getTime() + pack.expiresInDays * 86_400_000);
    const granted = await deps.meteredUsage.grantPurchase({
      id: deps.crypto.uuid(),
      projectId,
      subject,
      meterKey: pack.meterKey,
      units: pack.units,
      expiresAt,
      reason: pack.name,
      externalId: `checkout:${processor.kind}:${checkoutId}`,
      at,
    });
    if (granted) {
      // Once per checkout, as the grant: the buyer (a user's own purchase; an organization's is the processor's report).
      deps.audit.record(
        auditEntry(at, projectId, 'billing.credit_pack.purchased', {
          actor: subject.kind === 'user' ? { kind: 'user', id: subject.id } : SYSTEM_ACTOR,
          target: subject.kind === 'user' ? userTarget(subject.id) : { kind: 'organization', id: subject.id },
          origin: SYSTEM_ORIGIN,
          details: {
            pack_id: pack.id,
            name: pack.name,
            meter: pack.meterKey,
            units: pack.units,
            amount: pack.amount,
            currency: pack.currency,
            expires_at: expiresAt?.toISOString() ?? null,
            processor: processor.kind,
            checkout_id: checkoutId,
          },
        }),
      );
    }
    return processorOk(granted);
  };
}
