import { type ProcessorResult, processorOk } from '../../../application/billing/payment-processor';
import { isUuid } from '../../persistence/rows';
import type { SandboxContext } from './sandbox-context';
import type { PromotionCodeData } from './sandbox-objects';

/** A promotion code's percent off: more than 0, at most 100, at most two decimals (Stripe's `percent_off`). */
export const isPercentOff = (p: number): boolean => Number.isFinite(p) && p > 0 && p <= 100 && Math.abs(p * 100 - Math.round(p * 100)) < 1e-9;

/** A promotion code as the sandbox takes it: letters, digits, `-` and `_`, 1 to 50 characters. */
export const isPromotionCode = (code: string): boolean => /^[A-Za-z0-9_-]{1,50}$/.test(code.trim());

/** Promotion codes: a percentage off the first invoice that bills a subscription line. */
export class SandboxPromotionCodes {
  constructor(private readonly ctx: SandboxContext) {}

  async findPromotionCode(projectId: string, code: string): Promise<ProcessorResult<string | null>> {
    const found = await this.ctx.objects.findPromotionCode(projectId, code);
    return processorOk(found?.id ?? null);
  }

  /**
   * A promotion code (percent off the first invoice). Codes are case-insensitive; creating an
   * existing code again changes its percentage rather than making a second one.
   */
  async createPromotionCode(projectId: string, code: string, percentOff: number): Promise<void> {
    const trimmed = code.trim();
    if (!isPromotionCode(trimmed)) throw new RangeError(`Not a promotion code (letters, digits, - and _, up to 50): ${code}`);
    if (!isPercentOff(percentOff)) throw new RangeError(`Not a percentage from 0.01 to 100: ${percentOff}`);
    if (!isUuid(projectId)) throw new RangeError(`Not a project id: ${projectId}`);
    await this.ctx.transaction(async () => {
      const now = await this.ctx.now(projectId);
      // One writer per project at a time, so two creations of one code cannot both insert.
      await this.ctx.deps.db.query(`select pg_advisory_xact_lock(hashtext(?))`, [`sandbox-promo:${projectId}`]);
      const existing = await this.ctx.objects.findPromotionCode(projectId, trimmed);
      if (existing) {
        await this.ctx.objects.update({ ...existing, data: { ...existing.data, percentOff }, updatedAt: now });
        return;
      }
      const data: PromotionCodeData = { code: trimmed, percentOff, active: true };
      await this.ctx.objects.insert({
        id: this.ctx.newId('promotion_code'),
        projectId,
        kind: 'promotion_code',
        parentId: null,
        data,
        dueAt: null,
        createdAt: now,
        updatedAt: now,
      });
    });
  }
}
