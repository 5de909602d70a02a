import { ConnectionTimeout, StatementTimeout, Unavailable } from '../../store/errors.js'
import { problems } from './errors.js'

/**
 * The problem for a store that cannot serve now (stopped, unreachable, or not answering in
 * time): a 503 the client may retry after a second, naming nothing of the database. A timeout
 * says so in a context item (conventions: Common errors, `CONNECTION_TIMEOUT`). Any other error
 * is returned as it is.
 */
export function unavailableProblem (err: unknown): unknown {
  if (!(err instanceof Unavailable)) return err
  const context = err instanceof StatementTimeout || err instanceof ConnectionTimeout
    ? [{ code: 'CONNECTION_TIMEOUT', message: 'the database did not answer in time' }]
    : undefined
  return problems.unavailable('The database is unavailable; retry later.', { cause: err, headers: { 'retry-after': 1 }, ...(context === undefined ? {} : { context }) })
}
