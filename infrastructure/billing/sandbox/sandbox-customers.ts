import { type ProcessorMetadata, type ProcessorResult, processorOk } from '../../../application/billing/payment-processor';
import type { SandboxContext } from './sandbox-context';
import { noSuch } from './sandbox-errors';
import type { CustomerData, SandboxObject, SetupIntentData } from './sandbox-objects';

/** Customers (with their credit balance) and setup intents. */
export class SandboxCustomers {
  constructor(private readonly ctx: SandboxContext) {}

  createCustomer(
    projectId: string,
    input: { email: string | null; name: string | null; metadata: ProcessorMetadata; idempotencyKey: string },
  ): Promise<ProcessorResult<string>> {
    const params = { email: input.email, name: input.name, metadata: { ...input.metadata } };
    return this.ctx.idempotent(projectId, input.idempotencyKey, 'customers.create', params, async (now) => {
      const id = this.ctx.newId('customer');
      const data: CustomerData = { ...params, creditBalance: 0, defaultPaymentMethodId: null };
      await this.ctx.objects.insert({ id, projectId, kind: 'customer', parentId: null, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk(id);
    });
  }

  createSetupIntent(projectId: string, customerId: string, idempotencyKey: string): Promise<ProcessorResult<{ id: string; clientSecret: string }>> {
    return this.ctx.idempotent(projectId, idempotencyKey, 'setup_intents.create', { customerId }, async (now) => {
      const customer = await this.ctx.objects.get<CustomerData>(projectId, 'customer', customerId);
      if (!customer) return noSuch('customer', customerId);
      const id = this.ctx.newId('setup_intent');
      const clientSecret = `${id}_secret_${this.ctx.deps.crypto.uuid().replace(/-/g, '')}`;
      const data: SetupIntentData = { customerId, clientSecret, status: 'requires_payment_method' };
      await this.ctx.objects.insert({ id, projectId, kind: 'setup_intent', parentId: customerId, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk({ id, clientSecret });
    });
  }

  async saveCustomerBalance(customer: SandboxObject<CustomerData>, creditBalance: number, now: Date): Promise<SandboxObject<CustomerData>> {
    if (customer.data.creditBalance === creditBalance) return customer;
    const updated = { ...customer, data: { ...customer.data, creditBalance }, updatedAt: now };
    await this.ctx.objects.update(updated);
    return updated;
  }
}
