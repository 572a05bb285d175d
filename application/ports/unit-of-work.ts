/**
 * Runs `work` in one database transaction. Repositories called inside it take part in the
 * transaction without being passed anything.
 */
export interface UnitOfWork {
  transaction<T>(work: () => Promise<T>): Promise<T>;
}
