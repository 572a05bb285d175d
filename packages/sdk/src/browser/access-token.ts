import { readTokenClaims } from '../organizations';

/** Seconds of life the token was issued with (its exp - iat), read without trusting it: only to time the refresh. */
function tokenLifetimeMs(token: string): number | null {
  const claims = readTokenClaims(token);
  return typeof claims?.exp === 'number' && typeof claims.iat === 'number' ? (claims.exp - claims.iat) * 1000 : null;
}

/** When the token expires (its exp claim, ISO 8601), read without trusting it; null when it does not say. */
export function tokenExpiry(token: string): string | null {
  const exp = readTokenClaims(token)?.exp;
  return typeof exp === 'number' ? new Date(exp * 1000).toISOString() : null;
}

export interface AccessTokenTiming {
  /** Refresh this long before the token expires. */
  marginMs: number;
  /** Call `onDue` on a timer when the token starts to count as expiring. */
  autoRefresh: boolean;
  now: () => number;
}

/**
 * The access token, in memory only, and when it counts as expiring: the margin before its end, or
 * half its life for a token shorter-lived than that (at most 5 s early then). With `autoRefresh`,
 * `schedule()` sets a timer that calls `onDue` at that time (not sooner than a second from now).
 */
export class AccessTokenHolder {
  private token: string | null = null;
  /** Local time after which the token counts as expiring. */
  private refreshAt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly timing: AccessTokenTiming,
    private readonly onDue: () => void,
  ) {}

  /** The token unless there is none or it counts as expiring. */
  fresh(): string | null {
    return this.token && this.timing.now() < this.refreshAt ? this.token : null;
  }

  /** The token held, expiring or not. */
  current(): string | null {
    return this.token;
  }

  /** Holds a new token (`expiresAt` times it when the token itself does not say). */
  hold(token: string, expiresAt: string): void {
    this.token = token;
    const lifetime = tokenLifetimeMs(token) ?? Date.parse(expiresAt) - this.timing.now();
    this.refreshAt = this.timing.now() + Math.max(lifetime - this.timing.marginMs, Math.min(lifetime / 2, 5_000));
  }

  /** Makes the token count as expiring now: the next use refreshes it. */
  expire(): void {
    this.refreshAt = 0;
  }

  /** Forgets the token and stops its timer. */
  clear(): void {
    this.token = null;
    this.refreshAt = 0;
    this.stop();
  }

  schedule(): void {
    if (!this.timing.autoRefresh) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.max(this.refreshAt - this.timing.now(), 1_000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.onDue();
    }, delay);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
