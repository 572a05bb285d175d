import type { QrCodeRenderer } from '../../application/mfa/ports';

/** The qrcode package, loaded on the first enrollment rather than at every start. */
let library: Promise<typeof import('qrcode')> | undefined;

/** PNG QR codes as data URIs (`data:image/png;base64,...`), via the qrcode package. */
export class PngQrCodeRenderer implements QrCodeRenderer {
  async toDataUri(text: string): Promise<string> {
    library ??= import('qrcode');
    const QRCode = await library;
    return QRCode.toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 240 });
  }
}
