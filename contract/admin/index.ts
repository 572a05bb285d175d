import { c } from '../common';
import { adminProjectsContract } from './projects.contract';
import { adminSessionContract } from './session.contract';

export * from './schemas';
export { adminProjectsContract, adminSessionContract };

/** The admin API the web console calls (auth kind 'console'), mounted under /api/admin. */
export const adminContract = c.router({
  session: adminSessionContract,
  projects: adminProjectsContract,
});
