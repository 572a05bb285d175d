import { ACCESS_TOKEN_TTL_SECONDS } from '../../domain/access-token';
import { type ActiveOrganization, toClaim } from '../../domain/organizations/claims';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { AccessTokenCodec } from '../ports/access-tokens';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { ProjectSecrets } from '../stores/project.store';
import type { SessionOrigin } from '../stores/session.store';
import type { RefreshTokenStore } from '../stores/refresh-token.store';

export const REFRESH_TOKEN_PREFIX = 'rt_';

export interface SessionPolicy {
  /** Absolute lifetime of a session's refresh tokens. */
  refreshTokenTtlSeconds: number;
  /** A refresh token unused for this long stops working. */
  refreshTokenIdleSeconds: number;
}

export interface IssueSessionDeps {
  secrets: Pick<ProjectSecrets, 'signingKey'>;
  tokens: Pick<AccessTokenCodec, 'sign'>;
  refreshTokens: Pick<RefreshTokenStore, 'insert'>;
  crypto: TokenCrypto;
  clock: Clock;
  policy: SessionPolicy;
}

export interface IssueSessionInput {
  project: Project;
  user: EndUser;
  /** Provider claim of the access token (google, github, ..., email, magic-link). */
  provider: string;
  ttlSeconds?: number;
  authCodeId?: string | null;
  /** Where the end user was: the request that signed them in (for OAuth, the provider's callback). */
  origin: SessionOrigin;
}

export interface IssuedSession {
  token: string;
  refreshToken: string;
  expiresAt: Date;
  sessionId: string;
}

export function accessClaims(user: EndUser, provider: string, organization: ActiveOrganization | null = null) {
  const claims: {
    sub: string;
    email: string | null;
    name: string | null;
    picture: string | null;
    provider: string;
    email_verified?: boolean;
    org?: ReturnType<typeof toClaim>;
  } = {
    sub: user.id,
    email: user.email,
    name: user.name,
    picture: user.picture,
    provider,
  };
  if (user.email !== null) claims.email_verified = user.emailVerified;
  // The active organization, compactly (id, slg, rol, per); absent when the session acts for none.
  if (organization) claims.org = toClaim(organization);
  return claims;
}

/** Issues an access JWT and a new refresh-token session for a signed-in user. */
export function makeIssueSession(deps: IssueSessionDeps) {
  return async (input: IssueSessionInput): Promise<IssuedSession> => {
    const secret = await deps.secrets.signingKey(input.project.id);
    if (!secret) throw new Error(`signing key of project ${input.project.id} is missing`);
    const now = deps.clock.now();
    const ttl = input.ttlSeconds ?? ACCESS_TOKEN_TTL_SECONDS;
    const sessionId = deps.crypto.uuid();
    const token = await deps.tokens.sign({
      secret,
      projectId: input.project.id,
      claims: { ...accessClaims(input.user, input.provider), sid: sessionId },
      ttlSeconds: ttl,
      now,
    });
    const refreshToken = REFRESH_TOKEN_PREFIX + deps.crypto.randomToken(32);
    const ms = now.getTime();
    await deps.refreshTokens.insert(
      {
        id: deps.crypto.uuid(),
        projectId: input.project.id,
        userId: input.user.id,
        familyId: sessionId,
        parentId: null,
        provider: input.provider,
        authCodeId: input.authCodeId ?? null,
        createdAt: now,
        expiresAt: new Date(ms + deps.policy.refreshTokenTtlSeconds * 1000),
        idleExpiresAt: new Date(ms + deps.policy.refreshTokenIdleSeconds * 1000),
      },
      deps.crypto.hash(refreshToken),
      { ip: input.origin.ip, userAgent: input.origin.userAgent },
    );
    return { token, refreshToken, expiresAt: new Date(ms + ttl * 1000), sessionId };
  };
}
