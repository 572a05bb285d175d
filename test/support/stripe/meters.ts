import type Stripe from 'stripe';
import type { Account, StripeObject } from './account';
import type { Ctx, Route } from './context';
import { invalidRequest, paramError } from './errors';
import { listFields, s } from './params';
import { DAY, newId, paginate, randomString } from './util';

/**
 * Billing meters and meter events (https://docs.stripe.com/api/billing/meter,
 * https://docs.stripe.com/api/billing/meter-event, API version 2025-08-27.basil): a meter sums (or
 * counts, or takes the last of) the events sent under its `event_name`, per customer (the payload's
 * `customer_mapping.event_payload_key`, default `stripe_customer_id`) and the value under
 * `value_settings.event_payload_key` (default `value`). A price with `recurring.usage_type=metered`
 * and `recurring.meter` bills, at each renewal, the ended period's aggregate for the subscription's
 * customer (billing.ts). Meter events are not retrievable objects: the server keeps them as records.
 */

type Meter = Stripe.Billing.Meter;
type MeterEvent = Stripe.Billing.MeterEvent;

/** How a meter event is kept: Stripe gives it no id, so the record has an internal one. */
interface MeterEventRecord extends StripeObject {
  id: string;
  object: 'meter_event_record';
  event: MeterEvent;
}

/** "Must be within the past 35 calendar days or up to 5 minutes in the future" (MeterEventCreateParams.timestamp). */
const PAST_WINDOW = 35 * DAY;
const FUTURE_WINDOW = 5 * 60;

function meterCreate(ctx: Ctx, p: Record<string, any>): Meter {
  const { acct } = ctx;
  const clash = acct.all<Meter>('billing.meter', (m) => m.status === 'active' && m.event_name === p.event_name)[0];
  if (clash) {
    throw invalidRequest(`An active meter (\`${clash.id}\`) already uses the event_name \`${p.event_name}\`.`, { param: 'event_name' });
  }
  const meter: Meter = {
    id: newId('mtr_test', 32),
    object: 'billing.meter',
    created: acct.now,
    customer_mapping: {
      event_payload_key: p.customer_mapping?.event_payload_key ?? 'stripe_customer_id',
      type: 'by_id',
    },
    default_aggregation: { formula: p.default_aggregation.formula },
    display_name: p.display_name,
    event_name: p.event_name,
    event_time_window: p.event_time_window ?? null,
    livemode: false,
    status: 'active',
    status_transitions: { deactivated_at: null },
    updated: acct.now,
    value_settings: { event_payload_key: p.value_settings?.event_payload_key ?? 'value' },
  };
  acct.put(meter);
  return meter;
}

function meterEventCreate(ctx: Ctx, p: Record<string, any>): StripeObject {
  const { acct } = ctx;
  const timestamp: number = p.timestamp ?? acct.now;
  if (timestamp < acct.now - PAST_WINDOW || timestamp > acct.now + FUTURE_WINDOW) {
    throw paramError('The timestamp must be within the past 35 calendar days or up to 5 minutes in the future.', 'timestamp');
  }
  const payload: Record<string, string> = {};
  for (const [k, v] of Object.entries((p.payload ?? {}) as Record<string, string | null>)) if (v !== null) payload[k] = v;
  const identifier: string = p.identifier ?? randomString(24);
  // Uniqueness "within a rolling period of at least 24 hours": a duplicate is refused, not counted.
  if (acct.all<MeterEventRecord>('meter_event_record', (r) => r.event.identifier === identifier).length) {
    throw invalidRequest(`An event already exists with identifier ${identifier}.`, { param: 'identifier' });
  }
  const event: MeterEvent = { object: 'billing.meter_event', created: acct.now, event_name: p.event_name, identifier, livemode: false, payload, timestamp };
  acct.put<MeterEventRecord>({ id: newId('mevrec'), object: 'meter_event_record', event });
  return { ...event };
}

/**
 * What a meter aggregated for a customer over [start, end): the sum of the events' values (`sum`),
 * their number (`count`) or the latest value (`last`). Events Stripe would reject later, without a
 * number under the value key, count for nothing (Stripe reports them as meter errors).
 */
export function meterUsage(acct: Account, meterId: string, customer: string, start: number, end: number): number {
  const meter = acct.get(meterId) as Meter | undefined;
  if (!meter) return 0;
  const events = acct
    .all<MeterEventRecord>('meter_event_record')
    .reverse()
    .map((r) => r.event)
    .filter(
      (e) => e.event_name === meter.event_name && e.payload[meter.customer_mapping.event_payload_key] === customer && e.timestamp >= start && e.timestamp < end,
    );
  const values = events.map((e) => Number(e.payload[meter.value_settings.event_payload_key])).filter((v) => Number.isFinite(v));
  switch (meter.default_aggregation.formula) {
    case 'count':
      return events.length;
    case 'last':
      return values.at(-1) ?? 0;
    default:
      return values.reduce((sum, v) => sum + v, 0);
  }
}

/** The meter of a metered price, or Stripe's refusal ("No such billing.meter"). */
export function requireMeter(acct: Account, meterId: string, param: string): Meter {
  const meter = acct.find<Meter>('billing.meter', meterId, 'billing.meter', param);
  if (meter.status !== 'active') throw invalidRequest(`The meter \`${meterId}\` is inactive.`, { param });
  return meter;
}

export const meterRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/billing/meters',
    paramsType: 'Billing.MeterCreateParams',
    fields: {
      display_name: s.req(s.str({ max: 250 })),
      event_name: s.req(s.str({ max: 100 })),
      default_aggregation: s.req(s.obj({ formula: s.req(s.enum(['count', 'last', 'sum'])) })),
      customer_mapping: s.obj({ event_payload_key: s.req(s.str({ max: 100 })), type: s.req(s.enum(['by_id'])) }),
      value_settings: s.obj({ event_payload_key: s.req(s.str({ max: 100 })) }),
      event_time_window: s.enum(['day', 'hour']),
    },
    handler: meterCreate,
  },
  {
    method: 'GET',
    path: '/v1/billing/meters/:id',
    paramsType: 'Billing.MeterRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => ctx.acct.find('billing.meter', path.id!, 'billing.meter'),
  },
  {
    method: 'GET',
    path: '/v1/billing/meters',
    paramsType: 'Billing.MeterListParams',
    fields: { ...listFields, status: s.enum(['active', 'inactive']) },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Meter>('billing.meter', (m) => p.status === undefined || m.status === p.status),
        p,
        '/v1/billing/meters',
      ),
  },
  {
    method: 'POST',
    path: '/v1/billing/meter_events',
    paramsType: 'Billing.MeterEventCreateParams',
    fields: {
      event_name: s.req(s.str({ max: 100 })),
      payload: s.req(s.meta()),
      identifier: s.str({ max: 100 }),
      timestamp: s.int(),
    },
    handler: meterEventCreate,
  },
];
