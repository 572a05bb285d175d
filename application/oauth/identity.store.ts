import type { LinkCandidate } from '../../domain/oauth/linking';

/** A provider account attached to an end user: (provider, providerUserId) is unique per project. */
export interface Identity {
  id: string;
  projectId: string;
  userId: string;
  provider: string;
  providerUserId: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  picture: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface IdentityStore {
  find(projectId: string, provider: string, providerUserId: string): Promise<Identity | null>;
  /** Inserts unless (project, provider, provider user id) exists; false when it did. */
  insert(identity: Identity): Promise<boolean>;
  update(identity: Identity): Promise<void>;
  /** Users of the project with this email (case-insensitive), with their identities' providers. */
  linkCandidates(projectId: string, email: string): Promise<LinkCandidate[]>;
  listByUser(projectId: string, userId: string): Promise<Identity[]>;
}
