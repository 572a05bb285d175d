import { createHash } from 'node:crypto';
import {
  type MeteredPriceInput,
  type ProcessorMetadata,
  type ProcessorResult,
  processorFailed,
  processorOk,
} from '../../../application/billing/payment-processor';
import type { Plan, Price } from '../../../domain/billing/catalog';
import { parseCurrency, validateAmount } from '../../../domain/billing/money';
import { isBillingInterval } from '../../../domain/billing/periods';
import type { SandboxContext } from './sandbox-context';
import { invalidRequest, noSuch } from './sandbox-errors';
import { ID_PREFIX, type PriceData, type ProductData, type SandboxObject } from './sandbox-objects';

/** Products and prices (Stripe's `/v1/products` and `/v1/prices`), one product per plan. */
export class SandboxCatalog {
  constructor(private readonly ctx: SandboxContext) {}

  async upsertProduct(projectId: string, plan: Plan, productId: string | null, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    const now = await this.ctx.now(projectId);
    const data: ProductData = {
      name: plan.name,
      description: plan.description,
      features: [...plan.features],
      active: true,
      metadata: { ...metadata },
    };
    if (productId === null) {
      const id = this.ctx.newId('product');
      await this.ctx.objects.insert({ id, projectId, kind: 'product', parentId: null, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk(id);
    }
    return this.ctx.transaction(async () => {
      const product = await this.ctx.objects.get<ProductData>(projectId, 'product', productId, { lock: true });
      if (!product) return noSuch('product', productId);
      await this.ctx.objects.update({ ...product, data: { ...data, active: product.data.active }, updatedAt: now });
      return processorOk(productId);
    });
  }

  async createPrice(projectId: string, price: Price, productId: string, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    const product = await this.ctx.objects.get<ProductData>(projectId, 'product', productId);
    if (!product) return noSuch('product', productId);
    const currency = parseCurrency(price.currency);
    if (currency === null) return processorFailed(invalidRequest(`Invalid currency: ${price.currency}.`));
    if (!isBillingInterval(price.interval)) return processorFailed(invalidRequest(`Invalid recurring[interval]: ${String(price.interval)}.`));
    if (!validateAmount(price.amount, currency).ok) return processorFailed(invalidRequest(`Invalid unit_amount: ${price.amount}.`));
    const now = await this.ctx.now(projectId);
    const id = this.ctx.newId('price');
    const data: PriceData = {
      productId,
      name: price.name,
      amount: price.amount,
      currency,
      interval: price.interval,
      active: price.active,
      seats: price.seats,
      metadata: { ...metadata },
    };
    await this.ctx.objects.insert({ id, projectId, kind: 'price', parentId: productId, data, dueAt: null, createdAt: now, updatedAt: now });
    return processorOk(id);
  }

  /**
   * The metered price of these terms, created once: its id is derived from the terms (as Stripe's
   * `lookup_key` finds a price again), so the same terms always answer the same price.
   */
  async ensureMeteredPrice(projectId: string, input: MeteredPriceInput): Promise<ProcessorResult<string>> {
    const currency = parseCurrency(input.currency);
    if (currency === null) return processorFailed(invalidRequest(`Invalid currency: ${input.currency}.`));
    if (!Number.isSafeInteger(input.unitAmount) || input.unitAmount <= 0) return processorFailed(invalidRequest(`Invalid unit_amount: ${input.unitAmount}.`));
    if (!Number.isSafeInteger(input.packageSize) || input.packageSize < 1) {
      return processorFailed(invalidRequest(`Invalid transform_quantity[divide_by]: ${input.packageSize}.`));
    }
    const terms = [input.meterKey, input.unitAmount, input.packageSize, currency, input.interval].join(':');
    const id = `${ID_PREFIX.price}m_${createHash('sha256').update(`${projectId}:${terms}`).digest('hex').slice(0, 24)}`;
    if (await this.ctx.objects.get<PriceData>(projectId, 'price', id)) return processorOk(id);
    const now = await this.ctx.now(projectId);
    const data: PriceData = {
      productId: '',
      name: input.meterName,
      amount: input.unitAmount,
      currency,
      interval: input.interval,
      active: true,
      seats: null,
      metered: { meterKey: input.meterKey, meterName: input.meterName, packageSize: input.packageSize },
      metadata: { ...input.metadata },
    };
    try {
      await this.ctx.objects.insert({ id, projectId, kind: 'price', parentId: null, data, dueAt: null, createdAt: now, updatedAt: now });
    } catch (e) {
      // Another request created it at the same moment.
      if (!(await this.ctx.objects.get<PriceData>(projectId, 'price', id))) throw e;
    }
    return processorOk(id);
  }

  async archivePrice(projectId: string, priceId: string): Promise<ProcessorResult<void>> {
    return this.ctx.transaction(async () => {
      const price = await this.ctx.objects.get<PriceData>(projectId, 'price', priceId, { lock: true });
      if (!price) return noSuch('price', priceId);
      await this.ctx.objects.update({ ...price, data: { ...price.data, active: false }, updatedAt: await this.ctx.now(projectId) });
      return processorOk(undefined);
    });
  }
}

const pick = (p: PriceData) => ({ name: p.name, amount: p.amount, currency: p.currency, interval: p.interval, active: p.active, seats: p.seats ?? null });

export const domainPriceOf = (price: SandboxObject<PriceData>): Price => ({ id: price.id, planId: price.data.productId, ...pick(price.data) });
