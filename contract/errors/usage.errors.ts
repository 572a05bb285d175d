import type { ErrorEntry } from './types';

/**
 * Refusals of usage-based billing (docs/usage.md). A refused batch of events names the event and
 * the field in its message (`events[3].value: ...`), and records nothing.
 */
export const usageErrors = {
  unknown_meter: { status: 400, message: 'Unknown meter: no meter of the project has this key (create it first: console, CLI `meter create`)' },
  unknown_subject: { status: 400, message: 'Unknown subject: no user or organization of the project has this id' },
  invalid_usage_value: { status: 400, message: 'Invalid amount: a whole number of units from 0 to 10^12 (at least 1 to check or release)' },
  usage_event_too_old: { status: 400, message: 'Usage event too old: events may be reported up to 24 hours after they happened' },
  usage_event_in_future: { status: 400, message: 'Usage event in the future: its timestamp is more than 5 minutes ahead' },
  usage_event_conflict: {
    status: 400,
    message: 'Usage event id already used with another subject, meter, value or timestamp: ids are unique in the project and are never overwritten',
  },
  usage_event_not_found: { status: 404, message: 'No consumption of this subject has this event id' },
  release_not_supported: { status: 400, message: 'Nothing to release: a max meter records a level, not units that can be given back' },
  invalid_credit_amount: { status: 400, message: 'Invalid credit amount: a whole number of units from 1 to 10^12' },
  invalid_credit_expiry: { status: 400, message: 'Invalid credit expiry: an ISO 8601 time in the future, or null for none' },
  invalid_credit_reason: { status: 400, message: 'Invalid reason: at most 200 characters, no control characters' },
  meter_not_found: { status: 404, message: 'No such meter' },
  meter_key_taken: { status: 409, message: 'A meter of the project already has this key' },
  invalid_meter_key: { status: 400, message: 'Invalid meter key: a lower-case letter, then lower-case letters, digits or _, at most 64 characters' },
  invalid_meter_name: { status: 400, message: 'Invalid meter name: 1 to 100 characters, no control characters' },
  invalid_meter_unit: { status: 400, message: 'Invalid unit: at most 30 characters, no control characters' },
  invalid_meter_aggregation: { status: 400, message: 'Invalid aggregation: sum, count or max' },
  too_many_meters: { status: 409, message: 'A project has at most 100 meters' },
  invalid_usage_limit: {
    status: 400,
    message:
      'Invalid usage limit: a meter key (once per plan), included as a whole number from 0, reset period, day or month, overage refuse, bill ' +
      'or allow, and a price {unitAmount >= 1, packageSize >= 1} exactly when overage is bill',
  },
  too_many_usage_limits: { status: 400, message: 'A plan has at most 20 usage limits' },
  credit_pack_not_found: { status: 404, message: 'No such credit pack for sale' },
  invalid_credit_pack: {
    status: 400,
    message:
      'Invalid credit pack: a meter key, a name of 1 to 100 characters, 1 to 10^12 units, an amount of at least 1 in the minor units of a ' +
      'supported currency, and an expiry of 1 to 3660 days or none',
  },
} as const satisfies Record<string, ErrorEntry>;
