import { type Result, err, ok } from '../../domain/result';
import { applyMeterUpdate, MAX_METERS_PER_PROJECT, type Meter, type MeterError, validateMeterInput, type MeterInput } from '../../domain/usage/meter';
import type { AuditActor } from '../../domain/audit';
import { auditEntry } from '../audit/audit-log';
import type { RequestOrigin } from '../ports/request-origin';
import type { UsageDeps } from './deps';

/** Who changes the meters (the console's account, the CLI) and from where: the audit log's actor and origin. */
export interface Operator {
  actor: AuditActor;
  origin: RequestOrigin;
}

export function makeListMeters(deps: Pick<UsageDeps, 'meters'>) {
  return (projectId: string): Promise<Meter[]> => deps.meters.list(projectId);
}

/** A new meter of the project (at most 100; keys are unique in the project). */
export function makeCreateMeter(deps: Pick<UsageDeps, 'meters' | 'clock' | 'crypto' | 'audit'>) {
  return async function createMeter(
    projectId: string,
    input: MeterInput,
    by: Operator,
  ): Promise<Result<Meter, MeterError | 'meter_key_taken' | 'too_many_meters'>> {
    const fields = validateMeterInput(input);
    if (!fields.ok) return fields;
    const existing = await deps.meters.list(projectId);
    if (existing.some((m) => m.key === fields.value.key)) return err('meter_key_taken');
    if (existing.length >= MAX_METERS_PER_PROJECT) return err('too_many_meters');
    const meter: Meter = { id: deps.crypto.uuid(), projectId, ...fields.value, createdAt: deps.clock.now() };
    if (!(await deps.meters.insert(meter))) return err('meter_key_taken');
    deps.audit.record(auditEntry(meter.createdAt, projectId, 'usage.meter.created', { ...by, details: { key: meter.key, aggregation: meter.aggregation } }));
    return ok(meter);
  };
}

/** A meter renamed or given another unit label; its key and aggregation stay. */
export function makeUpdateMeter(deps: Pick<UsageDeps, 'meters' | 'audit' | 'clock'>) {
  return async function updateMeter(
    projectId: string,
    key: string,
    patch: { name?: string | null; unit?: string | null },
    by: Operator,
  ): Promise<Result<Meter, 'meter_not_found' | 'invalid_meter_name' | 'invalid_meter_unit'>> {
    const meter = await deps.meters.findByKey(projectId, key);
    if (meter === null) return err('meter_not_found');
    const updated = applyMeterUpdate(meter, patch);
    if (!updated.ok) return updated;
    await deps.meters.update(updated.value);
    deps.audit.record(
      auditEntry(deps.clock.now(), projectId, 'usage.meter.updated', { ...by, details: { key, name: updated.value.name, unit: updated.value.unit } }),
    );
    return ok(updated.value);
  };
}
