import type { Project } from '../../domain/project';
import { publicUser, type EndUser } from '../../domain/user';
import type { IssueSessionInput, IssuedSession } from '../tokens/issue-session';

/** What a primary sign-in (email, magic link, OAuth exchange) ends in. */
export type PrimarySignInOutcome = {
  kind: 'session';
  session: IssuedSession;
  user: ReturnType<typeof publicUser>;
};

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
