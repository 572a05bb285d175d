import Stripe from 'stripe';
import { outgoingTraceparent } from '../../tracing/request-scope';

/**
 * stripe-node's HTTP client with the W3C trace context: every request to Stripe carries a
 * `traceparent` in the trace of the request being served (a new trace outside one, e.g. a renewal
 * job). stripe-node has no per-request header option, so its client is wrapped; each retry is a
 * new span of the same trace.
 */
export function tracedStripeHttpClient(inner: Stripe.HttpClient = Stripe.createNodeHttpClient()): Stripe.HttpClient {
  return {
    getClientName: () => inner.getClientName(),
    makeRequest: (host, port, path, method, headers, requestData, protocol, timeout) =>
      inner.makeRequest(host, port, path, method, { ...headers, traceparent: outgoingTraceparent() }, requestData, protocol, timeout),
  };
}
