import QRCode from 'qrcode';
import type { QrCodeRenderer } from '../../application/mfa/ports';

/** PNG QR codes as data URIs (`data:image/png;base64,...`), via the qrcode package. */
export class PngQrCodeRenderer implements QrCodeRenderer {
  toDataUri(text: string): Promise<string> {
    return QRCode.toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 240 });
  }
}
