import type { ErrorEntry } from './types';

/**
 * Refusals of project webhooks: endpoints, their URLs (the private-address rule), the delivery log,
 * resend and replay. The CLI answers them today; the dashboard's routes will declare them.
 * docs/webhooks.md explains each.
 */
export const webhooksErrors = {
  webhook_endpoint_not_found: { status: 404, message: 'Webhook endpoint not found' },
  webhook_delivery_not_found: { status: 404, message: 'Webhook delivery not found' },
  invalid_webhook_url: {
    status: 400,
    message: 'Invalid webhook URL: an absolute https URL without credentials or a #fragment, at most 2048 characters',
  },
  webhook_url_not_https: {
    status: 400,
    message: 'Webhook URL not allowed: it must use https (http only where WEBHOOK_ALLOW_PRIVATE_URLS=true)',
  },
  webhook_url_private: {
    status: 400,
    message: 'Webhook URL not allowed: its host is a private, loopback, link-local or metadata address (only where WEBHOOK_ALLOW_PRIVATE_URLS=true)',
  },
  webhook_url_unresolvable: { status: 400, message: 'Webhook URL not allowed: its host name does not resolve' },
  invalid_webhook_events: {
    status: 400,
    message:
      'Invalid webhook events: a comma-separated list of subscription.created, subscription.updated, subscription.canceled, invoice.paid, ' +
      'payment.failed, invoice.refunded, organization.created, organization.updated, organization.deleted, organization.member.added, ' +
      'organization.member.updated, organization.member.removed, organization.invitation.created, organization.invitation.accepted, ' +
      'organization.invitation.revoked, usage.threshold, credits.low, credits.expired (none for all), and audit.* (the audit log, only when named)',
  },
  invalid_webhook_description: { status: 400, message: 'Invalid description: at most 500 characters, no control characters' },
  webhook_endpoint_disabled: { status: 409, message: 'The webhook endpoint is disabled: enable it first' },
  webhook_delivery_not_waiting: {
    status: 409,
    message: 'The delivery is not waiting for a retry: it is being sent now, or it succeeded or failed (resend it instead)',
  },
  invalid_replay_since: { status: 400, message: 'Invalid time to replay from: an ISO 8601 time, not in the future' },
} as const satisfies Record<string, ErrorEntry>;
