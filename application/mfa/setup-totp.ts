import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { SecretBox } from '../ports/crypto';
import { methodUnavailable, type MethodUnavailable, type MfaActor } from './actor';
import type { TotpStore } from './mfa.store';
import type { QrCodeRenderer, TotpAuthenticator } from './ports';

export interface SetupTotpDeps {
  totp: Pick<TotpStore, 'savePending'>;
  authenticator: Pick<TotpAuthenticator, 'generateSecret' | 'keyUri'>;
  qr: QrCodeRenderer;
  box: SecretBox;
  clock: Clock;
}

export interface TotpSetup {
  secret: string;
  /** data:image/png;base64 QR code of `uri`. */
  qrCode: string;
  uri: string;
}

/**
 * POST mfa/totp/setup: a new secret, pending until verify-setup confirms a code from the app. It
 * is stored encrypted; calling setup again replaces a pending secret. The issuer is the project name.
 */
export function makeSetupTotp(deps: SetupTotpDeps) {
  return async (actor: MfaActor): Promise<Result<TotpSetup, MethodUnavailable | 'totp_already_enrolled'>> => {
    const unavailable = methodUnavailable(actor.project, 'totp', true);
    if (unavailable) return err(unavailable);
    const secret = deps.authenticator.generateSecret();
    const saved = await deps.totp.savePending(actor.project.id, actor.user.id, deps.box.encrypt(secret), deps.clock.now());
    if (!saved) return err('totp_already_enrolled');
    const uri = deps.authenticator.keyUri({ label: actor.user.email ?? actor.user.name ?? actor.user.id, issuer: actor.project.name, secret });
    return ok({ secret, uri, qrCode: await deps.qr.toDataUri(uri) });
  };
}
