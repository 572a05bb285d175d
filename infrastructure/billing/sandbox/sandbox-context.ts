import { type ProcessorFailure, type ProcessorResult, type RequestFailure, processorFailed } from '../../../application/billing/payment-processor';
import type { Clock } from '../../../application/ports/clock';
import type { TokenCrypto } from '../../../application/ports/crypto';
import { IDEMPOTENCY_TTL_SECONDS, type JsonValue, canonicalJson, idempotencyDecision } from '../../../domain/billing/idempotency';
import { addSeconds } from '../../../domain/billing/periods';
import type { Database } from '../../persistence/database';
import { invalidRequest } from './sandbox-errors';
import { ID_PREFIX, type IdempotencyData, type SandboxKind, type SandboxObject, SandboxObjects, reviveDates } from './sandbox-objects';

export interface SandboxDependencies {
  db: Database;
  clock: Clock;
  crypto: TokenCrypto;
  /** Tollgate's public base URL: checkout pages live at `${publicUrl}/sandbox/checkout/<id>`. */
  publicUrl: string;
}

export const iso = (d: Date) => d.toISOString();

/**
 * What every sandbox resource shares: the stored objects, each project's sandbox time, new ids,
 * transactions and Stripe's idempotent requests.
 */
export class SandboxContext {
  readonly objects: SandboxObjects;

  constructor(readonly deps: SandboxDependencies) {
    this.objects = new SandboxObjects(deps.db);
  }

  /** The project's sandbox time: the clock plus the project's offset (like a Stripe test clock). */
  async now(projectId: string): Promise<Date> {
    return addSeconds(this.deps.clock.now(), await this.objects.offsetSeconds(projectId));
  }

  newId(kind: SandboxKind): string {
    return `${ID_PREFIX[kind]}${this.deps.crypto.uuid().replace(/-/g, '')}`;
  }

  transaction<T>(work: () => Promise<T>): Promise<T> {
    return this.deps.db.transaction(work);
  }

  /**
   * Runs `work` once per (project, key), as Stripe's idempotent requests: the same key with the same
   * parameters answers the stored answer for 24 hours (sandbox time), declines included; the same
   * key with other parameters is refused; a refusal of the request itself (an unknown id) is not
   * stored. A concurrent call with the same key waits for the first and answers its answer.
   */
  async idempotent<T, F extends ProcessorFailure = RequestFailure>(
    projectId: string,
    key: string,
    operation: string,
    params: JsonValue,
    work: (now: Date) => Promise<ProcessorResult<T, F>>,
  ): Promise<ProcessorResult<T, F | RequestFailure>> {
    if (key.length === 0 || key.length > 255) return processorFailed(invalidRequest('Idempotency keys are 1 to 255 characters long.'));
    let fingerprint: string;
    try {
      fingerprint = this.deps.crypto.hash(canonicalJson({ operation, params }));
    } catch {
      return processorFailed(invalidRequest('Invalid parameters: numbers must be finite.'));
    }
    const id = `${ID_PREFIX.idempotency}${this.deps.crypto.hash(`${projectId}\n${key}`)}`;
    return this.transaction(async () => {
      const now = await this.now(projectId);
      const placeholder: SandboxObject<IdempotencyData> = {
        id,
        projectId,
        kind: 'idempotency',
        parentId: null,
        data: { fingerprint, answer: null, expiresAt: iso(addSeconds(now, IDEMPOTENCY_TTL_SECONDS)) },
        dueAt: null,
        createdAt: now,
        updatedAt: now,
      };
      if (!(await this.objects.insertIfAbsent(placeholder))) {
        const stored = await this.objects.get<IdempotencyData>(projectId, 'idempotency', id, { lock: true });
        if (stored) {
          const decision = idempotencyDecision(
            { fingerprint: stored.data.fingerprint, createdAt: stored.createdAt, completedAt: stored.updatedAt },
            fingerprint,
            now,
          );
          if (decision === 'mismatch') {
            return processorFailed(
              invalidRequest(
                `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than ` +
                  `'${key}' if you meant to execute a different request.`,
              ),
            );
          }
          if (decision === 'replay') return reviveDates<ProcessorResult<T, F>>(stored.data.answer);
        }
        await this.objects.update({ ...placeholder, parentId: null });
        await this.deps.db.query(`update sandbox_objects set created_at = ? where id = ?`, [now, id]);
      }
      const answer = await work(now);
      if (!answer.ok && answer.failure.kind !== 'card_declined') {
        await this.objects.remove(id);
        return answer;
      }
      await this.objects.update<IdempotencyData>({
        id,
        parentId: null,
        data: { ...placeholder.data, answer: JSON.parse(JSON.stringify(answer)) as unknown },
        dueAt: null,
        updatedAt: now,
      });
      return answer;
    });
  }
}
