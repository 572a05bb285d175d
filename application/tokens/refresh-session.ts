import { ACCESS_TOKEN_TTL_SECONDS } from '../../domain/access-token';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { AccessTokenCodec } from '../ports/access-tokens';
import type { Clock } from '../ports/clock';
import type { SecretBox, TokenCrypto } from '../ports/crypto';
import type { RequestOrigin } from '../ports/request-origin';
import type { ProjectSecrets } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import { activeOrganizationOf, type MembershipLookup } from '../stores/organization-membership';
import { accessClaims, REFRESH_TOKEN_PREFIX, type SessionPolicy } from './issue-session';
import type { RefreshTokenStore, StoredRefreshToken } from '../stores/refresh-token.store';

export interface RefreshPolicy extends SessionPolicy {
  /** How long the immediately previous token still returns the pair it was rotated into. */
  reuseGraceSeconds: number;
}

export interface RefreshSessionDeps {
  refreshTokens: Pick<RefreshTokenStore, 'findByHash' | 'findById' | 'rotate' | 'revokeFamily'>;
  users: Pick<UserStore, 'findById'>;
  secrets: Pick<ProjectSecrets, 'signingKey'>;
  tokens: Pick<AccessTokenCodec, 'sign'>;
  crypto: TokenCrypto;
  box: SecretBox;
  audit: AuditLog;
  clock: Clock;
  policy: RefreshPolicy;
  /** The session's active organization as it is now (kept across refreshes while the user is a member). */
  memberships: MembershipLookup;
  /** Whether the user has a second factor enrolled (an organization that requires one is dropped until then). */
  hasSecondFactor: (projectId: string, userId: string) => Promise<boolean>;
}

export interface RefreshedSession {
  token: string;
  refreshToken: string;
}

/**
 * The successor pair as kept (encrypted) for the grace window. Rows written before the pair was
 * camelCase carry `refresh_token`; they live for seconds, but a rolling deploy can meet one.
 */
const readSuccessor = (json: string): RefreshedSession => {
  const pair = JSON.parse(json) as { token: string; refreshToken?: string; refresh_token?: string };
  return { token: pair.token, refreshToken: (pair.refreshToken ?? pair.refresh_token)! };
};

export type RefreshSessionError = 'invalid_refresh_token' | 'refresh_token_reused';

/**
 * Refresh with rotation (every use mints a new refresh token and retires the old one) and reuse
 * detection (a retired token presented again revokes its whole session), with one exception: the
 * immediately previous token, presented again within the grace window while its successor is
 * still unused, returns that same successor pair (parallel tabs, lost responses). Parallel
 * refreshes of one token race on one conditional UPDATE: one wins and mints the child; the others
 * then find the token rotated and get the same pair. Sessions end at their absolute expiry and
 * after the idle timeout.
 */
export function makeRefreshSession(deps: RefreshSessionDeps) {
  const { policy } = deps;

  const fromSuccessor = async (row: StoredRefreshToken, now: Date): Promise<Result<RefreshedSession, RefreshSessionError>> => {
    const withinGrace = row.rotatedAt !== null && now.getTime() - row.rotatedAt.getTime() <= policy.reuseGraceSeconds * 1000;
    if (withinGrace && row.revokedAt === null && row.successorEncrypted && row.replacedBy) {
      const child = await deps.refreshTokens.findById(row.replacedBy);
      if (child && child.revokedAt === null && child.rotatedAt === null) {
        return ok(readSuccessor(deps.box.decrypt(row.successorEncrypted)));
      }
    }
    // A retired token came back outside the grace window: the session is presumed stolen.
    await deps.refreshTokens.revokeFamily(row.familyId, now);
    return err('refresh_token_reused');
  };

  const refresh = async (
    project: Project,
    refreshToken: string,
    seen: { row?: StoredRefreshToken },
  ): Promise<Result<RefreshedSession, RefreshSessionError>> => {
    if (!refreshToken.startsWith(REFRESH_TOKEN_PREFIX) || refreshToken.length > 200) return err('invalid_refresh_token');
    const tokenHash = deps.crypto.hash(refreshToken);
    const now = deps.clock.now();
    const row = await deps.refreshTokens.findByHash(project.id, tokenHash);
    if (row) seen.row = row;
    if (!row || row.revokedAt !== null) return err('invalid_refresh_token');
    if (row.rotatedAt !== null) return fromSuccessor(row, now);
    if (row.expiresAt.getTime() <= now.getTime() || row.idleExpiresAt.getTime() <= now.getTime()) return err('invalid_refresh_token');

    const user = await deps.users.findById(project.id, row.userId);
    if (!user || user.disabled) {
      await deps.refreshTokens.revokeFamily(row.familyId, now);
      return err('invalid_refresh_token');
    }
    const secret = await deps.secrets.signingKey(project.id);
    if (!secret) throw new Error(`signing key of project ${project.id} is missing`);

    // The active organization, as the membership is now: a member removed or an organization
    // deleted since leaves none; one that now requires a second factor the user lacks, neither.
    let organization = null;
    if (row.activeOrganizationId) {
      const current = await deps.memberships.current(project.id, row.activeOrganizationId, user.id);
      if (current && (!current.requireMfa || (await deps.hasSecondFactor(project.id, user.id)))) organization = activeOrganizationOf(current);
    }

    // The successor is prepared before the race, so the winner records it in the same statement.
    const childId = deps.crypto.uuid();
    const pair: RefreshedSession = {
      token: await deps.tokens.sign({
        secret,
        projectId: project.id,
        claims: { ...accessClaims(user, row.provider, organization), sid: row.familyId },
        ttlSeconds: ACCESS_TOKEN_TTL_SECONDS,
        now,
      }),
      refreshToken: REFRESH_TOKEN_PREFIX + deps.crypto.randomToken(32),
    };
    // One atomic statement: mark this token rotated with its successor pair, insert the child,
    // and end the grace window of the token before it (only the immediately previous one keeps one).
    const rotated = await deps.refreshTokens.rotate({
      projectId: project.id,
      tokenHash,
      at: now,
      childId,
      childTokenHash: deps.crypto.hash(pair.refreshToken),
      childIdleExpiresAt: new Date(now.getTime() + policy.refreshTokenIdleSeconds * 1000),
      successorEncrypted: deps.box.encrypt(JSON.stringify(pair)),
    });
    if (rotated) return ok(pair);

    // Lost the race (or the token expired or was revoked meanwhile): look again.
    const after = await deps.refreshTokens.findByHash(project.id, tokenHash);
    if (!after || after.revokedAt !== null || after.rotatedAt === null) return err('invalid_refresh_token');
    return fromSuccessor(after, now);
  };

  /**
   * `token.refresh` (or `.failed` with the reason, `token.refresh.reused` when a retired token
   * revoked its session), about the session's user when the token named one.
   */
  return async (project: Project, refreshToken: string, origin: RequestOrigin): Promise<Result<RefreshedSession, RefreshSessionError>> => {
    const seen: { row?: StoredRefreshToken } = {};
    const result = await refresh(project, refreshToken, seen);
    const userId = seen.row?.userId ?? null;
    const action = result.ok ? 'token.refresh' : result.error === 'refresh_token_reused' ? 'token.refresh.reused' : 'token.refresh.failed';
    deps.audit.record(
      auditEntry(deps.clock.now(), project.id, action, {
        actor: { kind: 'user', id: userId },
        target: seen.row ? { kind: 'session', id: seen.row.familyId } : null,
        origin,
        reason: result.ok ? null : result.error,
      }),
    );
    return result;
  };
}
