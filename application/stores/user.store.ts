import type { EndUser } from '../../domain/user';

/** Core persistence of end users. Features add their own narrow stores next to their use cases. */
export interface UserStore {
  findById(projectId: string, userId: string): Promise<EndUser | null>;
  insert(user: EndUser): Promise<void>;
  update(user: EndUser): Promise<void>;
}
