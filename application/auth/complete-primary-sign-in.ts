import type { Project } from '../../domain/project';
import type { MfaMethod } from '../../domain/mfa';
import { publicUser, type EndUser } from '../../domain/user';
import type { IssueSessionInput, IssuedSession } from '../tokens/issue-session';

/**
 * What a primary sign-in (email signup/signin, magic-link click, OAuth code exchange) ends in:
 * a session, or a multi-factor challenge that must be passed first (no JWT then).
 */
export type PrimarySignInOutcome =
  | { kind: 'session'; session: IssuedSession; user: ReturnType<typeof publicUser> }
  | { kind: 'mfa'; challenge: string; methods: MfaMethod[]; enrollmentRequired: boolean };

export interface CompletePrimarySignInDeps {
  issueSession: (input: IssueSessionInput) => Promise<IssuedSession>;
}

/**
 * The one gate every primary authentication passes through. It decides what the sign-in yields;
 * multi-factor policy plugs in here.
 */
export function makeCompletePrimarySignIn(deps: CompletePrimarySignInDeps) {
  return async (input: {
    project: Project;
    user: EndUser;
    provider: string;
    ttlSeconds?: number;
    authCodeId?: string | null;
  }): Promise<PrimarySignInOutcome> => {
    const session = await deps.issueSession(input);
    return { kind: 'session', session, user: publicUser(input.user) };
  };
}
