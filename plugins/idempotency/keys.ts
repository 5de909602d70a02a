import { createHash } from 'node:crypto'
import { quoteIdent } from '../../store/quote.js'
import type { Migration, Queryable } from '../../store/types.js'
import { problems } from '../problem/index.js'

/** What a request claims with its `Svc-Idempotency-Key` (conventions: Headers, Svc-Idempotency-Key). */
export interface IdempotencyClaim {
  /** Execution context: keys of `prod` and `preprod` never meet. */
  ctx: string
  /**
   * Who sent the key (the token's subject; '' without one): two callers' keys never meet,
   * so one cannot learn of, or block, another's request by guessing its key.
   */
  caller: string
  /** The resource kind the key guards, e.g. `documents`. */
  resource: string
  key: string
  method: string
  /** The path the request changed, e.g. `/v1/documents/42`. */
  target: string
  /** Digest of the request body (see `fingerprintOf`), so a reused key with another body is told apart. */
  fingerprint: string
  /** The resource the request created or changed, named in the 409 of a repeated POST. */
  instance: string
  /** The success status the first request answered. */
  status: number
}

/** The stored outcome of the first request that used a key. */
export type IdempotencyRecord = Pick<IdempotencyClaim, 'method' | 'target' | 'fingerprint' | 'instance' | 'status'>

/** An object's members in code-point order of their names, so equal JSON values serialize alike. */
function sortedMembers (_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const sorted: Record<string, unknown> = {}
  for (const name of Object.keys(value).sort()) sorted[name] = (value as Record<string, unknown>)[name]
  return sorted
}

/**
 * A stable digest of a parsed body: the same JSON value sent again gives the same
 * fingerprint, whatever the order of its object members (RFC 8259: an object is unordered).
 */
export function fingerprintOf (body: unknown): string {
  return createHash('sha256').update(body === undefined ? '' : JSON.stringify(body, sortedMembers)).digest('base64url')
}

/**
 * Decides the answer to a request whose key was already used: the first request's
 * success status for a retried idempotent request (PUT, PATCH, DELETE: "an idempotent
 * action returns a 2xx"), else 409 naming the first resource ("a non-idempotent action
 * returns 409"), also when the key comes back with another method, path or body.
 */
export function replayStatus (record: IdempotencyRecord, claim: IdempotencyClaim): number {
  const instance = record.instance
  if (record.method !== claim.method || record.target !== claim.target) {
    throw problems.conflict(`The Svc-Idempotency-Key was already used for ${record.method} ${record.target}; send a new key with each distinct request.`, { instance })
  }
  if (record.fingerprint !== claim.fingerprint) {
    throw problems.conflict(`The Svc-Idempotency-Key was already used for ${record.method} ${record.target} with another body; send a new key with each distinct request.`, { instance })
  }
  if (record.method === 'POST') {
    throw problems.conflict(`The Svc-Idempotency-Key was already used to create ${instance}; GET it instead of creating it again.`, { instance })
  }
  return record.status
}

/**
 * Persists idempotency keys in one table, scoped by `(ctx, resource, caller, key)`. `claim` runs
 * on the caller's transaction, so the key is written with the change it guards and
 * disappears with it when that change fails.
 */
export class IdempotencyKeys {
  readonly table: string
  readonly ttl: number
  private readonly claimSql: string
  private readonly readSql: string
  private readonly purgeSql: string

  constructor (table: string, ttl: number) {
    this.table = table
    this.ttl = ttl
    const t = quoteIdent(table)
    // A live key blocks the insert; an expired one is taken over, so it can be reused.
    // A concurrent claim of the same key waits on the primary key until the first commits.
    this.claimSql = `INSERT INTO ${t} AS k (ctx, resource, caller, key, method, target, fingerprint, instance, status, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + $10 * interval '1 millisecond')
      ON CONFLICT (ctx, resource, caller, key) DO UPDATE SET method = EXCLUDED.method, target = EXCLUDED.target,
        fingerprint = EXCLUDED.fingerprint, instance = EXCLUDED.instance, status = EXCLUDED.status,
        created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE k.expires_at <= now()
      RETURNING 1 AS claimed`
    this.readSql = `SELECT method, target, fingerprint, instance, status FROM ${t} WHERE ctx = $1 AND resource = $2 AND caller = $3 AND key = $4`
    this.purgeSql = `DELETE FROM ${t} WHERE expires_at <= now()`
  }

  /** The table, created through the store's migrations. */
  migrations (): Migration[] {
    const t = quoteIdent(this.table)
    return [{
      id: `idempotency:${this.table}:v1`,
      sql: `CREATE TABLE IF NOT EXISTS ${t} (
        ctx text NOT NULL,
        resource text NOT NULL,
        key text NOT NULL,
        method text NOT NULL,
        target text NOT NULL,
        fingerprint text NOT NULL,
        instance text NOT NULL,
        status integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        CONSTRAINT ${quoteIdent(`${this.table}_pkey`)} PRIMARY KEY (ctx, resource, key)
      );
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${this.table}_expires_at_idx`)} ON ${t} (expires_at)`
    }, {
      // Keys are the caller's own. A key stored before this has no caller (''): a retry of it
      // after the upgrade, by a caller with a token, is a new request.
      id: `idempotency:${this.table}:v2-caller`,
      sql: `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS caller text NOT NULL DEFAULT '';
      ALTER TABLE ${t} DROP CONSTRAINT ${quoteIdent(`${this.table}_pkey`)};
      ALTER TABLE ${t} ADD CONSTRAINT ${quoteIdent(`${this.table}_pkey`)} PRIMARY KEY (ctx, resource, caller, key)`
    }]
  }

  /** Claims the key on `db` (a transaction): null when it is now this request's, else the first request's record. */
  async claim (db: Queryable, claim: IdempotencyClaim): Promise<IdempotencyRecord | null> {
    const { rows } = await db.query(this.claimSql, [
      claim.ctx, claim.resource, claim.caller, claim.key, claim.method, claim.target, claim.fingerprint, claim.instance, claim.status, this.ttl
    ])
    if (rows.length > 0) return null
    const found = await db.query<IdempotencyRecord>(this.readSql, [claim.ctx, claim.resource, claim.caller, claim.key])
    // Gone between the two statements (purged the moment it expired): the key is free again.
    /* c8 ignore next */
    if (found.rows.length === 0) return await this.claim(db, claim)
    return found.rows[0] as IdempotencyRecord
  }

  /** Deletes expired keys; returns how many. */
  async purge (db: Queryable): Promise<number> {
    const { rowCount } = await db.query(this.purgeSql)
    return rowCount
  }
}
