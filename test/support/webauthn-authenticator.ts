import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { cose, isoCBOR } from '@simplewebauthn/server/helpers';

/** Authenticator data flags (WebAuthn §6.1). */
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

/** A credential the software authenticator created and can sign with. */
export interface SoftCredential {
  /** Credential id, base64url. */
  id: string;
  privateKey: KeyObject;
  rpId: string;
  /** The user handle of the registration options (`options.user.id`, base64url). */
  userHandle: string;
  /** The counter the last response carried (0 after creation). */
  signCount: number;
}

export interface SoftAuthenticatorOptions {
  /** AAGUID written into the attested credential data; defaults to all zeros. */
  aaguid?: string;
  /** Whether responses carry the UV flag (default true). */
  userVerification?: boolean;
  /** Whether responses carry the UP flag (default true). */
  userPresence?: boolean;
}

/** What the browser would put in clientDataJSON; each field can be overridden to build a bad response. */
interface ClientOverrides {
  /** The page's origin, e.g. 'http://localhost:3000'. */
  origin: string;
  /** Challenge to sign instead of the options' one. */
  challenge?: string;
  /** clientData type instead of 'webauthn.create' / 'webauthn.get'. */
  type?: string;
  /** clientData crossOrigin (default false). */
  crossOrigin?: boolean;
}

export interface CreateCredentialOptions extends ClientOverrides {
  /** RP ID hashed into the authenticator data and stored with the credential; defaults to `options.rp.id`. */
  rpId?: string;
}

export interface GetAssertionOptions extends ClientOverrides {
  /** RP ID hashed into the authenticator data; defaults to `options.rpId`, else the credential's RP ID. */
  rpId?: string;
  /** Which held credential signs; by default the first of `allowCredentials` held, else the first held for the RP ID. */
  credentialId?: string;
  /** Counter to put in this response instead of the stored one + 1; the stored counter is left as it was. */
  signCount?: number;
  /** Whether this response carries the UV flag; defaults to the authenticator's setting. */
  userVerification?: boolean;
}

const ZERO_AAGUID = '00000000-0000-0000-0000-000000000000';

const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

/** Base64url of the JSON clientData a browser would build. */
function clientDataJSON(defaultType: string, defaultChallenge: string, o: ClientOverrides): string {
  const data = { type: o.type ?? defaultType, challenge: o.challenge ?? defaultChallenge, origin: o.origin, crossOrigin: o.crossOrigin ?? false };
  return b64url(Buffer.from(JSON.stringify(data), 'utf8'));
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function parseAaguid(aaguid: string): Buffer {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(aaguid)) throw new Error(`Invalid AAGUID ${aaguid}`);
  return Buffer.from(aaguid.replaceAll('-', ''), 'hex');
}

/** Error named like the DOMException a browser raises, so tests can tell the refusals apart. */
function domError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

/**
 * A software WebAuthn authenticator for tests: ES256 (P-256) keys, attestation 'none', platform attachment.
 * It builds the responses a browser would send (`RegistrationResponseJSON`, `AuthenticationResponseJSON`)
 * and keeps the credentials it created, with their private keys and counters, in memory.
 */
export class SoftAuthenticator {
  private readonly aaguid: Buffer;
  private readonly userVerification: boolean;
  private readonly userPresence: boolean;
  private readonly held: SoftCredential[] = [];

  constructor(options: SoftAuthenticatorOptions = {}) {
    this.aaguid = parseAaguid(options.aaguid ?? ZERO_AAGUID);
    this.userVerification = options.userVerification ?? true;
    this.userPresence = options.userPresence ?? true;
  }

  /**
   * navigator.credentials.create(): makes a new P-256 credential for `options.rp.id` and answers with attestation 'none'.
   * Throws InvalidStateError when it already holds one of `options.excludeCredentials` for that RP,
   * NotSupportedError when `options.pubKeyCredParams` does not offer ES256 (-7).
   * It does not refuse when user verification is required but off: the server is expected to.
   */
  createCredential(options: PublicKeyCredentialCreationOptionsJSON, opts: CreateCredentialOptions): RegistrationResponseJSON {
    const rpId = opts.rpId ?? options.rp.id;
    if (!rpId) throw new Error('No RP ID: options.rp.id is empty and opts.rpId is not set');
    if (!options.pubKeyCredParams.some((p) => p.type === 'public-key' && p.alg === cose.COSEALG.ES256)) {
      throw domError('NotSupportedError', 'The options do not offer ES256 (-7)');
    }
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if (this.held.some((c) => c.rpId === rpId && excluded.has(c.id))) {
      throw domError('InvalidStateError', 'The authenticator already holds an excluded credential');
    }

    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    if (!jwk.x || !jwk.y) throw new Error('P-256 public key without x or y');
    const coseKey = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [cose.COSEKEYS.kty, cose.COSEKTY.EC2],
        [cose.COSEKEYS.alg, cose.COSEALG.ES256],
        [cose.COSEKEYS.crv, cose.COSECRV.P256],
        [cose.COSEKEYS.x, new Uint8Array(Buffer.from(jwk.x, 'base64url'))],
        [cose.COSEKEYS.y, new Uint8Array(Buffer.from(jwk.y, 'base64url'))],
      ]),
    );

    const credentialId = randomBytes(32);
    const credIdLength = Buffer.alloc(2);
    credIdLength.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.of(this.flags(this.userVerification) | FLAG_AT),
      uint32(0),
      this.aaguid,
      credIdLength,
      credentialId,
      coseKey,
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, never>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, never>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );

    const id = b64url(credentialId);
    this.held.push({ id, privateKey, rpId, userHandle: options.user.id, signCount: 0 });
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON('webauthn.create', options.challenge, opts),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
        publicKeyAlgorithm: cose.COSEALG.ES256,
        publicKey: b64url(publicKey.export({ format: 'der', type: 'spki' })),
        authenticatorData: b64url(authData),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /**
   * navigator.credentials.get(): signs authenticatorData || SHA-256(clientDataJSON) with a held credential (DER ECDSA).
   * The stored counter goes up by one per assertion unless `opts.signCount` is given.
   * Throws NotAllowedError when it holds no matching credential.
   */
  getAssertion(options: PublicKeyCredentialRequestOptionsJSON, opts: GetAssertionOptions): AuthenticationResponseJSON {
    const credential = this.select(options, opts);
    const rpId = opts.rpId ?? options.rpId ?? credential.rpId;
    let signCount = opts.signCount;
    if (signCount === undefined) {
      credential.signCount += 1;
      signCount = credential.signCount;
    }
    const authData = Buffer.concat([sha256(rpId), Buffer.of(this.flags(opts.userVerification ?? this.userVerification)), uint32(signCount)]);
    const clientData = clientDataJSON('webauthn.get', options.challenge, opts);
    const signature = sign('sha256', Buffer.concat([authData, sha256(Buffer.from(clientData, 'base64url'))]), credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData,
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** Copies of the credentials it holds, in creation order. */
  credentials(): SoftCredential[] {
    return this.held.map((c) => ({ ...c }));
  }

  /** Drops a credential (a passkey deleted on the device); true when it held it. */
  forget(credentialId: string): boolean {
    const index = this.held.findIndex((c) => c.id === credentialId);
    if (index < 0) return false;
    this.held.splice(index, 1);
    return true;
  }

  private flags(userVerified: boolean): number {
    return (this.userPresence ? FLAG_UP : 0) | (userVerified ? FLAG_UV : 0);
  }

  /** The credential that answers: the one named, else the first allowed one held, else (discoverable) the first held for the RP. */
  private select(options: PublicKeyCredentialRequestOptionsJSON, opts: GetAssertionOptions): SoftCredential {
    if (opts.credentialId !== undefined) {
      const named = this.held.find((c) => c.id === opts.credentialId);
      if (!named) throw domError('NotAllowedError', `The authenticator holds no credential ${opts.credentialId}`);
      return named;
    }
    const allowed = options.allowCredentials ?? [];
    if (allowed.length > 0) {
      const ids = new Set(allowed.map((c) => c.id));
      const match = this.held.find((c) => ids.has(c.id));
      if (!match) throw domError('NotAllowedError', 'The authenticator holds none of the allowed credentials');
      return match;
    }
    const rpId = options.rpId ?? opts.rpId;
    const discoverable = this.held.find((c) => c.rpId === rpId);
    if (!discoverable) throw domError('NotAllowedError', `The authenticator holds no credential for RP ID ${rpId}`);
    return discoverable;
  }
}

/**
 * A copy of a registration or authentication response whose clientDataJSON has `patch` merged in and is re-encoded
 * (a key patched to undefined is dropped). Nothing is re-signed: an assertion's signature no longer matches. A registration
 * with attestation 'none' carries no signature over clientDataJSON, so there only the patched fields themselves can be refused.
 */
export function tamperClientData<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(responseJSON: T, patch: Record<string, unknown>): T {
  const decoded = JSON.parse(Buffer.from(responseJSON.response.clientDataJSON, 'base64url').toString('utf8')) as Record<string, unknown>;
  const clientData = b64url(Buffer.from(JSON.stringify({ ...decoded, ...patch }), 'utf8'));
  return { ...responseJSON, response: { ...responseJSON.response, clientDataJSON: clientData } };
}
