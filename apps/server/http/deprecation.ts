import type { Response } from 'express';
import type { RouteDeprecation } from '../../../contract/common';

/** At least this long between a route's deprecation and its sunset (docs/api-compatibility.md). */
export const MIN_DEPRECATION_DAYS = 180;

const day = (date: string, what: string): number => {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(ms)) throw new Error(`A route's deprecation ${what} must be a date as YYYY-MM-DD, not "${date}"`);
  return ms;
};

/**
 * The headers a deprecated route answers with: `Deprecation: @<unix seconds>` (RFC 9745),
 * `Sunset: <HTTP date>` (RFC 8594) and, when the route names one, `Link: <url>; rel="deprecation"`.
 * Throws when the dates are not dates or the sunset comes less than MIN_DEPRECATION_DAYS after.
 */
export function deprecationHeaders(deprecation: RouteDeprecation): Record<string, string> {
  const since = day(deprecation.since, 'date (since)');
  const sunset = day(deprecation.sunset, 'sunset');
  if (sunset - since < MIN_DEPRECATION_DAYS * 86_400_000) {
    throw new Error(`A route deprecated on ${deprecation.since} may not be removed before ${MIN_DEPRECATION_DAYS} days later (sunset ${deprecation.sunset})`);
  }
  return {
    Deprecation: `@${Math.floor(since / 1000)}`,
    Sunset: new Date(sunset).toUTCString(),
    ...(deprecation.link ? { Link: `<${deprecation.link}>; rel="deprecation"; type="text/html"` } : {}),
  };
}

const computed = new WeakMap<RouteDeprecation, [string, string][]>();

/**
 * Sets a deprecated route's headers on its response, before the route authenticates or validates
 * anything, so that its refusals carry them too. (test/unit/api-deprecation.test.ts checks every
 * deprecation the contract declares, so a misdeclared one fails the tests, not a request.)
 */
export function announceDeprecation(res: Response, deprecation: RouteDeprecation): void {
  let headers = computed.get(deprecation);
  if (!headers) {
    headers = Object.entries(deprecationHeaders(deprecation));
    computed.set(deprecation, headers);
  }
  for (const [name, value] of headers) res.setHeader(name, value);
}
