import { Purge, type PurgeResult } from './purge.js'
import { quoteIdent } from './quote.js'
import type { ClaimPart, WriteClaim } from './statement-parts.js'
import type { Migration, Queryable, Store } from './types.js'

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
  /**
   * The `ETag` the first request answered with (the entity's new one after a PUT or PATCH),
   * so that a retry gets it too; null or absent when its answer carried none.
   */
  etag?: string | null
}

/** The stored outcome of the first request that used a key. */
export type IdempotencyRecord = Pick<IdempotencyClaim, 'method' | 'target' | 'fingerprint' | 'instance' | 'status'> & { etag: string | null }

export interface IdempotencyKeysOptions {
  /**
   * The clock keys are claimed, expired and purged by; default the database's (`now()`), the
   * same for every instance. Tests pass one they move.
   */
  now?: () => Date
  /** Expired keys deleted per statement by `purge`. Default 1000. */
  purgeBatchSize?: number
}

/**
 * Persists idempotency keys in one table, scoped by `(ctx, resource, caller, key)`. `claim` runs
 * on the caller's transaction, so the key is written with the change it guards and
 * disappears with it when that change fails.
 */
export class IdempotencyKeys {
  readonly table: string
  readonly ttl: number
  private readonly now: (() => Date) | null
  private readonly T: string
  private readonly claimSql: string
  private readonly readSql: string
  private readonly heldSql: string
  private readonly purger: Purge

  constructor (table: string, ttl: number, options: IdempotencyKeysOptions = {}) {
    this.table = table
    this.ttl = ttl
    this.now = options.now ?? null
    const t = quoteIdent(table)
    this.T = t
    // A live key blocks the insert; an expired one is taken over, so it can be reused.
    // A concurrent claim of the same key waits on the primary key until the first commits.
    // $11: the clock, null for the database's.
    this.claimSql = `INSERT INTO ${t} AS k (ctx, resource, caller, key, method, target, fingerprint, instance, status, etag, created_at, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $12, coalesce($11::timestamptz, now()), coalesce($11::timestamptz, now()) + $10 * interval '1 millisecond')
      ON CONFLICT (ctx, resource, caller, key) DO UPDATE SET method = EXCLUDED.method, target = EXCLUDED.target,
        fingerprint = EXCLUDED.fingerprint, instance = EXCLUDED.instance, status = EXCLUDED.status, etag = EXCLUDED.etag,
        created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
      WHERE k.expires_at <= coalesce($11::timestamptz, now())
      RETURNING 1 AS claimed`
    this.readSql = `SELECT method, target, fingerprint, instance, status, etag FROM ${t} WHERE ctx = $1 AND resource = $2 AND caller = $3 AND key = $4`
    this.heldSql = `${this.readSql} AND expires_at > coalesce($5::timestamptz, now())`
    // The retention rule of the table: a key goes once it has expired.
    this.purger = new Purge({ table, column: 'expires_at', retention: 0, ...(options.purgeBatchSize === undefined ? {} : { batchSize: options.purgeBatchSize }) })
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
    }, {
      // The first answer's ETag, for its retries; a key stored before this answers without one.
      id: `idempotency:${this.table}:v3-etag`,
      sql: `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS etag text`
    }]
  }

  /**
   * The claim as part of a write statement (store/statement-parts.ts): the CTE `k`, with a row
   * when the key is now this request's. It commits or rolls back with the write it guards.
   */
  writeClaim (claim: IdempotencyClaim): WriteClaim<IdempotencyRecord> {
    return { part: this.claimPart(claim), take: async (db) => await this.claim(db, claim), holder: async (db) => await this.held(db, claim) }
  }

  private claimPart (claim: IdempotencyClaim): ClaimPart {
    return {
      key: this.T,
      values: [claim.ctx, claim.resource, claim.caller, claim.key, claim.method, claim.target, claim.fingerprint, claim.instance, claim.status, this.ttl, this.now?.() ?? null, claim.etag ?? null],
      sql: (first, when) => {
        const $ = (i: number): string => `$${first + i}`
        // Typed: a SELECT's parameters take no type from the columns they go to.
        const at = `coalesce(${$(10)}::timestamptz, now())`
        return `k AS (INSERT INTO ${this.T} AS held (ctx, resource, caller, key, method, target, fingerprint, instance, status, etag, created_at, expires_at)
        SELECT ${[0, 1, 2, 3, 4, 5, 6, 7].map(i => `${$(i)}::text`).join(', ')}, ${$(8)}::integer, ${$(11)}::text, ${at}, ${at} + ${$(9)}::double precision * interval '1 millisecond'${when === null ? '' : ` WHERE ${when}`}
        ON CONFLICT (ctx, resource, caller, key) DO UPDATE SET method = EXCLUDED.method, target = EXCLUDED.target,
          fingerprint = EXCLUDED.fingerprint, instance = EXCLUDED.instance, status = EXCLUDED.status, etag = EXCLUDED.etag,
          created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE held.expires_at <= ${at}
        RETURNING 1)`
      }
    }
  }

  /** The record of the request that holds the key now, or null when none does (never used, or expired). */
  async held (db: Queryable, claim: Pick<IdempotencyClaim, 'ctx' | 'resource' | 'caller' | 'key'>): Promise<IdempotencyRecord | null> {
    const found = await db.query<IdempotencyRecord>(this.heldSql, [claim.ctx, claim.resource, claim.caller, claim.key, this.now?.() ?? null])
    return found.rows[0] ?? null
  }

  /** Claims the key on `db` (a transaction): null when it is now this request's, else the first request's record. */
  async claim (db: Queryable, claim: IdempotencyClaim): Promise<IdempotencyRecord | null> {
    const { rows } = await db.query(this.claimSql, [
      claim.ctx, claim.resource, claim.caller, claim.key, claim.method, claim.target, claim.fingerprint, claim.instance, claim.status, this.ttl, this.now?.() ?? null, claim.etag ?? null
    ])
    if (rows.length > 0) return null
    const found = await db.query<IdempotencyRecord>(this.readSql, [claim.ctx, claim.resource, claim.caller, claim.key])
    // Gone between the two statements (purged the moment it expired): the key is free again.
    /* c8 ignore next */
    if (found.rows.length === 0) return await this.claim(db, claim)
    return found.rows[0] as IdempotencyRecord
  }

  /**
   * Deletes expired keys in batches, unless another instance is purging them now (store/purge.ts);
   * says how many it deleted.
   */
  async purge (store: Store): Promise<PurgeResult> {
    return await this.purger.run(store, this.now?.() ?? null)
  }
}
