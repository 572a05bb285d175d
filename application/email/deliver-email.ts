import { parseEmailMessage, type EmailRenderer, type MailTransport } from '../mail/email-message';

export interface DeliverEmailDeps {
  renderer: EmailRenderer;
  transport: MailTransport;
}

/**
 * The outbox handler of the email topic: renders the recorded message in its locale and hands it
 * to the transport. A transport failure throws, and the job queue retries later.
 */
export function makeDeliverEmail(deps: DeliverEmailDeps) {
  return async (payload: Record<string, unknown>, messageId: string): Promise<void> => {
    const message = parseEmailMessage(payload);
    if (!message) throw new Error('malformed email message in the outbox');
    const rendered = deps.renderer.render(message);
    await deps.transport.send({
      ...rendered,
      messageId,
      to: message.to,
      secretPreview: message.code ?? message.url ?? '',
    });
  };
}
