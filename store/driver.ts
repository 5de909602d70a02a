import type { IsolationLevel, Queryable, StoreKind } from './types.js'

/**
 * What an engine provides to the generic store (`base.ts`). Every method rejects with
 * a typed store error for anything the database or the connection did; other errors
 * (the caller's own, or a driver's programming error) pass unchanged.
 */
export interface Driver extends Queryable {
  readonly kind: StoreKind
  /**
   * BEGIN at `isolation`, `fn` on one connection, COMMIT; ROLLBACK and rethrow when `fn` throws.
   * `timed` false: the statements wait for the server without the pool's statement timeout.
   */
  transaction: <T>(isolation: IsolationLevel, fn: (session: Queryable) => Promise<T>, timed: boolean) => Promise<T>
  /** `Store.listen`, with `channel` already checked by `quoteIdent`. */
  listen: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>
  close: () => Promise<void>
}

/** Isolation level → SQL keywords, from a fixed table: nothing from a caller reaches the SQL. */
export const ISOLATION_SQL: Readonly<Record<IsolationLevel, string>> = {
  'read committed': 'READ COMMITTED',
  'repeatable read': 'REPEATABLE READ',
  serializable: 'SERIALIZABLE'
}
