import { createHmac } from 'node:crypto';
import type { WebhookSigner } from '../../application/webhooks/ports';

/** HMAC-SHA256 keyed with the secret string as UTF-8 (the whole `whsec_...`), hex. */
export class HmacWebhookSigner implements WebhookSigner {
  hmacHex(secret: string, content: string): string {
    return createHmac('sha256', secret).update(content, 'utf8').digest('hex');
  }
}
