import { z } from 'zod';

/**
 * The JSON forms of WebAuthn ceremonies as browsers give them (`PublicKeyCredential.toJSON()`,
 * @simplewebauthn/browser's startRegistration / startAuthentication). Sizes are capped so that no
 * body is parsed beyond what an authenticator sends; everything inside is checked by the server.
 */
const B64Url = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, 'Expected base64url');

const ClientExtensionResults = z.record(z.unknown()).default({});
const Attachment = z.enum(['platform', 'cross-platform']).nullish();

export const RegistrationResponseSchema = z
  .object({
    id: B64Url(1366),
    rawId: B64Url(1366),
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: B64Url(8192),
      attestationObject: B64Url(65536),
      transports: z.array(z.string().max(32)).max(10).optional(),
      authenticatorData: B64Url(65536).optional(),
      publicKey: B64Url(8192).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
    }),
    clientExtensionResults: ClientExtensionResults,
    authenticatorAttachment: Attachment,
  })
  .describe('The new credential as the browser gives it (PublicKeyCredential.toJSON())');

export const AuthenticationResponseSchema = z
  .object({
    id: B64Url(1366),
    rawId: B64Url(1366),
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON: B64Url(8192),
      authenticatorData: B64Url(65536),
      signature: B64Url(8192),
      userHandle: B64Url(1024).nullish(),
    }),
    clientExtensionResults: ClientExtensionResults,
    authenticatorAttachment: Attachment,
  })
  .describe('The assertion as the browser gives it (PublicKeyCredential.toJSON())');

/** Options for navigator.credentials.create / get, as JSON (PublicKeyCredentialCreationOptionsJSON, ...RequestOptionsJSON). */
export const CreationOptionsSchema = z.record(z.unknown()).describe('PublicKeyCredentialCreationOptionsJSON: give it to the browser as it is');
export const RequestOptionsSchema = z.record(z.unknown()).describe('PublicKeyCredentialRequestOptionsJSON: give it to the browser as it is');
