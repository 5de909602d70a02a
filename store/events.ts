import type { CollectionQuery, FieldMap, Page } from '../model/query.js'
import type { FieldColumns } from './field-columns.js'
import { notifyTriggerSql } from './notify-trigger.js'
import { Purge, type PurgeResult } from './purge.js'
import { quoteIdent } from './quote.js'
import { readChildPage, readPage } from './read-page.js'
import { HELD, type ClaimPart, type OutboxPart, type QuietPart } from './statement-parts.js'
import type { Migration, Queryable, Store } from './types.js'

/** Where a delivery stands: waiting for an attempt (or the next one), delivered, or given up. */
export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED'

/** A subscription as stored. Dates are ISO 8601 strings in UTC. */
export interface SubscriptionRow {
  ctx: string
  id: string
  url: string
  events: string[]
  description: string | null
  active: boolean
  secret: string
  etag: string
  createdDateTime: string
  createdBy: string | null
  modifiedDateTime: string
  modifiedBy: string | null
}

/** What a new subscription is made of. */
export type NewSubscription = Pick<SubscriptionRow, 'ctx' | 'id' | 'url' | 'events' | 'description' | 'secret' | 'etag' | 'createdBy'>

/** The fields a change of a subscription sets: its new ETag and author, and the fields given (a merge patch's); a field left out keeps its value. */
export type SubscriptionChange = Partial<Pick<SubscriptionRow, 'url' | 'events' | 'description' | 'active'>> & Pick<SubscriptionRow, 'etag' | 'modifiedBy'>

/**
 * The ETags a write of a subscription applies at: one of `allowed` (null: any), none of
 * `refused` (null: no such condition); with `eventsWithin`, also only while every event type
 * the subscription has is one of those (the types the caller may read).
 */
export interface EtagCondition {
  allowed: readonly string[] | null
  refused: readonly string[] | null
  eventsWithin?: readonly string[]
}

/** The SQL of `at` on the row's `etag` (and events), its values pushed onto `values`. */
function etagWhere (at: EtagCondition, values: unknown[]): string {
  const parts: string[] = []
  if (at.allowed !== null) parts.push(`etag = ANY($${values.push(at.allowed)}::text[])`)
  if (at.refused !== null) parts.push(`etag <> ALL($${values.push(at.refused)}::text[])`)
  if (at.eventsWithin !== undefined) parts.push(`events <@ $${values.push(at.eventsWithin)}::text[]`)
  return parts.length === 0 ? 'true' : parts.join(' AND ')
}

/** A delivery as stored: one event for one subscription. */
export interface DeliveryRow {
  ctx: string
  id: string
  subscriptionId: string
  eventType: string
  status: DeliveryStatus
  attemptCount: number
  lastStatusCode: number | null
  lastAttemptDateTime: string | null
  nextAttemptDateTime: string | null
  createdDateTime: string
}

/**
 * A delivery claimed for an attempt: what the attempt sends, and where. None of its record's
 * outcome (status, last and next attempt): the claim reads what the attempt needs, row by row.
 */
export interface ClaimedDelivery extends Pick<DeliveryRow, 'ctx' | 'id' | 'subscriptionId' | 'eventType' | 'attemptCount' | 'createdDateTime'> {
  /** The body, as signed and sent; null when it is made from `entity`. */
  payload: string | null
  /** A resource change's entity as written, its columns as text (`ResourceTable.snapshot`); null for an event emitted with its body. */
  entity: Array<string | null> | null
  requestId: string | null
  /** Attempts since it was created or last retried by hand: which delay of the schedule follows a failure. */
  tries: number
  url: string
  secret: string
}

/** An event on its way to the outbox: its type and the body every subscriber receives. */
export interface OutboxEvent {
  type: string
  payload: string
}

/** How an attempt ended, for `finish`. */
export interface AttemptOutcome {
  id: string
  status: DeliveryStatus
  statusCode: number | null
  /** When the next attempt is due (status PENDING); null otherwise. */
  next: Date | null
  /**
   * The delivery's `attemptCount` as the claim of this attempt left it: an attempt whose lease ran
   * out and was claimed again meanwhile (by any instance, its own too) is not the one recorded.
   */
  attempt: number
}

/** The SQL of the paths the collections of subscriptions and deliveries may filter and order on (alias `t`). */
const SUBSCRIPTION_COLUMNS: FieldColumns = new Map([['id', 't.id'], ['active', 't.active'], ['createdDateTime', 't.created_at']])
const DELIVERY_COLUMNS: FieldColumns = new Map([['id', 't.id'], ['status', 't.status'], ['eventType', 't.event_type'], ['createdDateTime', 't.created_at']])

function subscriptionColumns (a = ''): string {
  const p = a === '' ? '' : `${a}.`
  return `${p}ctx, ${p}id, ${p}url, ${p}events, ${p}description, ${p}active, ${p}secret, ${p}etag, ${p}created_at AS "createdDateTime",
    ${p}created_by AS "createdBy", ${p}modified_at AS "modifiedDateTime", ${p}modified_by AS "modifiedBy"`
}

function deliveryColumns (a = ''): string {
  const p = a === '' ? '' : `${a}.`
  return `${p}ctx, ${p}id, ${p}subscription_id AS "subscriptionId", ${p}event_type AS "eventType", ${p}status, ${p}attempt_count AS "attemptCount",
    ${p}last_status_code AS "lastStatusCode", ${p}last_attempt_at AS "lastAttemptDateTime", ${p}next_attempt_at AS "nextAttemptDateTime",
    ${p}created_at AS "createdDateTime"`
}

// Date-times come as the API writes them (store/parsers.ts).
const subscriptionOf = (row: Record<string, unknown>): SubscriptionRow => row as unknown as SubscriptionRow
const deliveryOf = (row: Record<string, unknown>): DeliveryRow => row as unknown as DeliveryRow

/**
 * The outbox of outgoing events: subscriptions, and one delivery row per event and matching
 * subscription, written by `emit` in the transaction of the change that causes the event (so
 * a change that commits has its deliveries, and one rolled back has none). Any instance claims
 * due deliveries with `FOR UPDATE SKIP LOCKED` and a lease, as jobs are claimed (store/jobs.ts):
 * two instances never attempt the same one, and the attempts of an instance that died are
 * taken up again once its lease runs out. Times come from the caller's clock, so tests move them.
 */
export class EventTables {
  readonly subscriptions: string
  readonly deliveries: string
  /** The channel a delivery coming due is notified on (`Store.listen`): the deliveries table's name. */
  readonly channel: string
  private readonly S: string
  private readonly D: string
  private readonly emitSql: string
  /** What a statement calls to notify `channel` when it commits. */
  private readonly notifySql: string
  private readonly purger: Purge

  /** `retention`: milliseconds an ended delivery (SUCCEEDED or FAILED) stays listed. */
  constructor (prefix = 'event', retention = 7 * 24 * 60 * 60 * 1000) {
    this.subscriptions = `${prefix}_subscriptions`
    this.deliveries = `${prefix}_deliveries`
    this.channel = this.deliveries
    this.S = quoteIdent(this.subscriptions)
    this.D = quoteIdent(this.deliveries)
    this.notifySql = `pg_notify('${this.channel.replaceAll("'", "''")}', '')`
    // Open deliveries have no ended_at: only ended ones are ever past keeping.
    this.purger = new Purge({ table: this.deliveries, column: 'ended_at', retention })
    // One statement per write, however many events and subscribers: the fan-out is a join. Its
    // subscriptions are locked as the foreign key's check locks them (FOR KEY SHARE): one deleted
    // by a transaction that commits meanwhile is then left out, where the check would refuse the
    // delivery, and with it the change whose event it is (see outboxPart).
    this.emitSql = `INSERT INTO ${this.D} (ctx, id, subscription_id, event_type, payload, request_id, status, next_attempt_at, created_at)
      SELECT $1, gen_random_uuid()::text, s.id, e.type, e.payload, $2, 'PENDING', $3, $3
      FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS e(type, payload, n)
      JOIN ${this.S} s ON s.ctx = $1 AND s.active AND s.events @> ARRAY[e.type]
      ORDER BY e.n FOR KEY SHARE OF s
      RETURNING ${this.notifySql}`
  }

  migrations (): Migration[] {
    const s = this.subscriptions
    const d = this.deliveries
    return [{
      id: `events:${s}:v1`,
      sql: `CREATE TABLE IF NOT EXISTS ${this.S} (
        ctx text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        url text NOT NULL,
        events text[] NOT NULL,
        description text,
        active boolean NOT NULL DEFAULT true,
        secret text NOT NULL,
        etag text NOT NULL,
        consecutive_failures integer NOT NULL DEFAULT 0,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        created_by text,
        modified_at timestamptz(3) NOT NULL DEFAULT now(),
        modified_by text,
        CONSTRAINT ${quoteIdent(`${s}_pkey`)} PRIMARY KEY (ctx, id)
      );
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${s}_active_idx`)} ON ${this.S} (ctx) WHERE active;
      CREATE TABLE IF NOT EXISTS ${this.D} (
        ctx text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        subscription_id text COLLATE "C" NOT NULL,
        event_type text NOT NULL,
        payload text NOT NULL,
        request_id text,
        status text NOT NULL CONSTRAINT ${quoteIdent(`${d}_status_check`)} CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
        attempt_count integer NOT NULL DEFAULT 0,
        tries integer NOT NULL DEFAULT 0,
        last_status_code integer,
        last_attempt_at timestamptz(3),
        next_attempt_at timestamptz(3),
        lease_owner text,
        lease_until timestamptz(3),
        created_at timestamptz(3) NOT NULL,
        CONSTRAINT ${quoteIdent(`${d}_pkey`)} PRIMARY KEY (id),
        CONSTRAINT ${quoteIdent(`${d}_subscription_fkey`)} FOREIGN KEY (ctx, subscription_id) REFERENCES ${this.S} (ctx, id) ON DELETE CASCADE
      );
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${d}_due_idx`)} ON ${this.D} (next_attempt_at) WHERE status = 'PENDING';
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${d}_list_idx`)} ON ${this.D} (ctx, subscription_id, created_at DESC, id DESC)`
    }, {
      // When a delivery ended, for the purge of those past their retention.
      id: `events:${d}:v2-ended-at`,
      sql: `ALTER TABLE ${this.D} ADD COLUMN IF NOT EXISTS ended_at timestamptz(3);
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${d}_ended_idx`)} ON ${this.D} (ended_at) WHERE ended_at IS NOT NULL`
    }, {
      // A claim reads each subscription's due deliveries from an index range of their own.
      id: `events:${d}:v3-due-by-subscription`,
      sql: `CREATE INDEX IF NOT EXISTS ${quoteIdent(`${d}_due_sub_idx`)} ON ${this.D} (ctx, subscription_id, next_attempt_at) WHERE status = 'PENDING';
      DROP INDEX IF EXISTS ${quoteIdent(`${d}_due_idx`)}`
    }, {
      // A claim rewrites only columns no index holds (the lease, the counts): with room left on
      // the row's page, the new version stays there and no index is touched (a HOT update).
      // Half a page: room for one new version of each row written there, whatever its size.
      // Pages filled before this keep their fill; those written after it get the room.
      id: `events:${d}:v4-room-for-claims`,
      sql: `ALTER TABLE ${this.D} SET (fillfactor = 50)`
    }, {
      // A resource change's delivery keeps the entity as written (its columns as text), in the
      // write's own statement; the body is made from it when the delivery is attempted.
      id: `events:${d}:v5-entity-snapshot`,
      sql: `ALTER TABLE ${this.D} ADD COLUMN IF NOT EXISTS entity text[];
      ALTER TABLE ${this.D} ALTER COLUMN payload DROP NOT NULL;
      ALTER TABLE ${this.D} ADD CONSTRAINT ${quoteIdent(`${d}_body_check`)} CHECK (payload IS NOT NULL OR entity IS NOT NULL)`
    }, {
      // Instances wake when a delivery is written, whoever writes it (a write's own statement
      // included), and when one is due again now: retried by hand, or given back unattempted.
      id: `events:${d}:v6-notify`,
      sql: notifyTriggerSql({
        table: d,
        due: {
          columns: ['status', 'lease_owner'],
          when: "NEW.status = 'PENDING' AND NEW.lease_owner IS NULL AND (OLD.status <> 'PENDING' OR OLD.lease_owner IS NOT NULL) AND NEW.next_attempt_at <= now()"
        }
      })
    }, {
      // A new delivery is announced by the statement or the instance that writes it (emit,
      // outboxPart, the events plugin), not by a trigger on every insert: each transaction that
      // notifies takes one lock at its commit, in turn with every other, which held concurrent
      // writes with subscribers back. Deliveries coming due again still notify.
      id: `events:${d}:v7-announced-by-writers`,
      sql: `DROP TRIGGER IF EXISTS ${quoteIdent(`${d}_notify_insert`)} ON ${this.D}`
    }, {
      // Every write asks which active subscriptions want its event (outboxPart, quietPart, emit):
      // found from the index by the type, as `events @> ARRAY[type]`, they cost a write the same
      // however many subscriptions want other events, where reading the context's active ones
      // cost it each of them. Without GIN's pending list (fastupdate): a subscription is written
      // rarely, and every write would read the list whole until a vacuum merged it.
      id: `events:${s}:v2-by-event-type`,
      sql: `CREATE INDEX IF NOT EXISTS ${quoteIdent(`${s}_events_idx`)} ON ${this.S} USING gin (events) WITH (fastupdate = off) WHERE active`
    }]
  }

  /** Deletes the deliveries that ended longer than the retention ago (store/purge.ts). `now` replaces the database's clock. */
  async purge (store: Store, now: Date | null = null): Promise<PurgeResult> {
    return await this.purger.run(store, now)
  }

  /**
   * Writes one delivery per event and active subscription of `ctx` that wants its type; run
   * it in the transaction of the change. Returns how many were written.
   */
  async emit (db: Queryable, ctx: string, requestId: string | null, at: Date, events: readonly OutboxEvent[]): Promise<number> {
    if (events.length === 0) return 0
    const { rowCount } = await db.query(this.emitSql, [ctx, requestId, at, events.map(e => e.type), events.map(e => e.payload)])
    return rowCount
  }

  /**
   * A write's deliveries as part of its statement (store/statement-parts.ts): one per written
   * row and active subscription of the context that wants `type`, holding the row as written;
   * the body is made from it when the delivery is attempted (`ClaimedDelivery.entity`). A
   * subscription deleted while the statement runs gets none: the join locks the subscriptions
   * it reads, waiting for a delete in progress and leaving out the row it removed; without the
   * lock, the foreign key's check refused the delivery, and the write failed with it (a 409
   * for a change that names no other entity).
   * `notify`: the statement notifies `channel` of the deliveries it writes when its transaction
   * commits. Without it, the caller announces them once the statement has committed
   * (`announce`), as an autocommit write does: the writes of a busy instance then share one
   * notification instead of taking the commit's notify lock one after another.
   * `replaced`: for the rows of an upsert, the event of a row it replaced; `type` is then that of
   * a row it created, as the statement says of each (`written.created`).
   */
  outboxPart (type: string, requestId: string | null, at: Date, notify: boolean, replaced: string | null = null): OutboxPart {
    const types = replaced === null ? [type] : [type, replaced]
    return {
      key: `${this.D}${notify ? ':notify' : ''}${replaced === null ? '' : ':upsert'}`,
      // A date-time as text: pg formats a Date parameter far more slowly.
      values: [...types, requestId, at.toISOString()],
      sql: (first, written) => {
        const next = first + types.length
        const [$request, $at] = [`$${next}::text`, `$${next + 1}::timestamptz`]
        if (replaced !== null && written.created === undefined) throw new TypeError('outboxPart: a part of two events needs the write to say which rows it created')
        const $type = replaced === null ? `$${first}::text` : `(CASE WHEN ${written.created as string} THEN $${first}::text ELSE $${first + 1}::text END)`
        return `o AS (INSERT INTO ${this.D} (ctx, id, subscription_id, event_type, entity, request_id, status, next_attempt_at, created_at)
        SELECT ${written.ctx}, gen_random_uuid()::text, s.id, ${$type}, ${written.snapshot}, ${$request}, 'PENDING', ${$at}, ${$at}
        FROM ${written.source} JOIN ${this.S} AS s ON s.ctx = ${written.ctx} AND s.active AND s.events @> ARRAY[${$type}]
        FOR KEY SHARE OF s RETURNING ${notify ? this.notifySql : '1'})`
      }
    }
  }

  /**
   * The check a write makes instead of its outbox part when no subscription is expected to want
   * `type` (store/statement-parts.ts): none of the context's active subscriptions wants it, in
   * the statement's snapshot, the one the outbox part would have joined.
   */
  quietPart (type: string): QuietPart {
    return {
      key: this.S,
      values: [type],
      // Counted, not NOT EXISTS: planned once for any type (a named statement's generic plan), an
      // EXISTS expects some subscription to want it and reads the table until the first.
      sql: (first, ctx) => `(SELECT count(*) FROM ${this.S} AS s WHERE s.ctx = ${ctx} AND s.active AND s.events @> ARRAY[$${first}::text]) = 0`
    }
  }

  /** Tells the instances listening on `channel` that deliveries were written and committed. */
  async announce (db: Queryable): Promise<void> {
    await db.query(`SELECT ${this.notifySql}`)
  }

  /**
   * Writes a new subscription. With `claim` (an idempotency key's, store/statement-parts.ts),
   * only when the claim is taken, in the same statement: `HELD` when the key answers for
   * another request.
   */
  async insertSubscription (db: Queryable, s: NewSubscription, at: Date, claim: ClaimPart | null = null): Promise<SubscriptionRow | typeof HELD> {
    const values = [s.ctx, s.id, s.url, s.events, s.description, s.secret, s.etag, at, s.createdBy]
    const columns = 'ctx, id, url, events, description, secret, etag, created_at, created_by, modified_at, modified_by'
    const { rows } = claim === null
      ? await db.query(`INSERT INTO ${this.S} (${columns}) VALUES ($1, $2, $3, $4::text[], $5, $6, $7, $8, $9, $8, $9) RETURNING ${subscriptionColumns()}`, values)
      : await db.query(`WITH ${claim.sql(values.length + 1, null)}
        INSERT INTO ${this.S} (${columns})
        SELECT $1::text, $2::text, $3::text, $4::text[], $5::text, $6::text, $7::text, $8::timestamptz, $9::text, $8::timestamptz, $9::text WHERE EXISTS (SELECT 1 FROM k)
        RETURNING ${subscriptionColumns()}`, [...values, ...claim.values])
    return rows.length === 0 ? HELD : subscriptionOf(rows[0] as Record<string, unknown>)
  }

  /** The subscription; null when `ctx` has none of that id. `lock`, in a transaction, keeps others from changing it until it ends. */
  async getSubscription (db: Queryable, ctx: string, id: string, lock = false): Promise<SubscriptionRow | null> {
    const { rows } = await db.query(`SELECT ${subscriptionColumns()} FROM ${this.S} WHERE ctx = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [ctx, id])
    return rows.length === 0 ? null : subscriptionOf(rows[0] as Record<string, unknown>)
  }

  /**
   * Sets the fields `c` gives while the subscription's ETag is as `etags` says (the one the
   * change was decided on, or the request's conditions); null when it is not (changed or deleted
   * since, or not there). A subscription switched back on starts a new run of failures. With
   * `claim`, only when the claim is taken too: `HELD` when the key answers for another request.
   */
  async updateSubscription (db: Queryable, ctx: string, id: string, c: SubscriptionChange, at: Date, etags: EtagCondition, claim: ClaimPart | null = null): Promise<SubscriptionRow | null | typeof HELD> {
    const values: unknown[] = [ctx, id, c.url ?? null, c.events ?? null, c.description ?? null, c.active ?? null, c.etag, c.modifiedBy, at, c.description !== undefined]
    const where = etagWhere(etags, values)
    // A field left out is null here: kept (a description set to null is told apart by $10).
    // The stamp never goes back, though `at` was taken before a concurrent change that
    // committed first (If-Unmodified-Since compares with it).
    const update = (also: string): string => `UPDATE ${this.S} SET url = coalesce($3::text, url), events = coalesce($4::text[], events),
        description = CASE WHEN $10::boolean THEN $5::text ELSE description END, active = coalesce($6::boolean, active), etag = $7, modified_by = $8,
        modified_at = greatest($9::timestamptz, modified_at),
        consecutive_failures = CASE WHEN $6 AND NOT active THEN 0 ELSE consecutive_failures END
      WHERE ctx = $1 AND id = $2 AND ${where}${also} RETURNING ${subscriptionColumns()}`
    if (claim === null) {
      const { rows } = await db.query(update(''), values)
      return rows.length === 0 ? null : subscriptionOf(rows[0] as Record<string, unknown>)
    }
    return await this.claimedWrite(db, this.claimedAt(this.S, `ctx = $1 AND id = $2 AND ${where}`, claim, values.length + 1),
      update(' AND EXISTS (SELECT 1 FROM k)'), [...values, ...claim.values], subscriptionOf)
  }

  /**
   * Deletes it with its deliveries when its ETag is as `etags` says; false when none was
   * deleted. With `claim`, only when the claim is taken too: `HELD` when the key answers for
   * another request.
   */
  async deleteSubscription (db: Queryable, ctx: string, id: string, etags: EtagCondition, claim: ClaimPart | null = null): Promise<boolean | typeof HELD> {
    const values: unknown[] = [ctx, id]
    const at = etagWhere(etags, values)
    if (claim === null) {
      const { rowCount } = await db.query(`DELETE FROM ${this.S} WHERE ctx = $1 AND id = $2 AND ${at}`, values)
      return rowCount > 0
    }
    const { rows } = await db.query<{ found: boolean, deleted: number }>(`${this.claimedAt(this.S, `ctx = $1 AND id = $2 AND ${at}`, claim, values.length + 1)},
      w AS (DELETE FROM ${this.S} WHERE ctx = $1 AND id = $2 AND ${at} AND EXISTS (SELECT 1 FROM k) RETURNING 1)
      SELECT EXISTS (SELECT 1 FROM c) AS found, (SELECT count(*) FROM w)::integer AS deleted`, [...values, ...claim.values])
    const { found, deleted } = rows[0] as { found: boolean, deleted: number }
    return deleted > 0 ? true : found ? HELD : false
  }

  /**
   * The head of a write under an idempotency claim: `c`, the row of `table` where `condition`
   * holds, locked (its latest version, so that a change committed since the statement's
   * snapshot is seen), and the claim `k`, taken only when there is one: a claim is never kept
   * for a write that did not happen. The claim's values start at `$first`.
   */
  private claimedAt (table: string, condition: string, claim: ClaimPart, first: number): string {
    return `WITH c AS (SELECT 1 FROM ${table} WHERE ${condition} FOR UPDATE),
      ${claim.sql(first, 'EXISTS (SELECT 1 FROM c)')}`
  }

  /**
   * Runs `write`, a statement returning the row it changes, as the CTE `w` after `head`
   * (`claimedAt`): the row written, `HELD` when `c` found the row but the claim answers for
   * another request, null when `c` found none.
   */
  private async claimedWrite<R> (db: Queryable, head: string, write: string, values: readonly unknown[], decode: (row: Record<string, unknown>) => R): Promise<R | null | typeof HELD> {
    const { rows } = await db.query<Record<string, unknown>>(`${head},
      w AS (${write})
      SELECT EXISTS (SELECT 1 FROM c) AS "svc:found", w.* FROM (SELECT 1) AS one LEFT JOIN w ON true`, values)
    const row = rows[0] as Record<string, unknown>
    if (row.id != null) {
      delete row['svc:found']
      return decode(row)
    }
    return row['svc:found'] === true ? HELD : null
  }

  /**
   * A finished page of `ctx`'s subscriptions as `query` selects them (store/read-page.ts). The
   * paths of `fields` are `id`, `active` and `createdDateTime`.
   */
  async pageSubscriptions (db: Queryable, query: CollectionQuery, fields: FieldMap, ctx: string): Promise<Page<SubscriptionRow>> {
    return await readPage(db, query, fields, { select: subscriptionColumns('t'), from: `${this.S} t`, where: 't.ctx = $1', params: [ctx] },
      { columns: SUBSCRIPTION_COLUMNS, decode: subscriptionOf })
  }

  /**
   * A finished page of one subscription's deliveries as `query` selects them; null when it is
   * empty and the subscription is not there, in the same statement (its deliveries show it
   * exists: they are deleted with it). The paths of `fields` are `id`, `status`, `eventType`
   * and `createdDateTime`.
   */
  async pageDeliveries (db: Queryable, query: CollectionQuery, fields: FieldMap, ctx: string, subscriptionId: string): Promise<Page<DeliveryRow> | null> {
    return await readChildPage(db, query, fields, { select: deliveryColumns('t'), from: `${this.D} t`, where: 't.ctx = $1 AND t.subscription_id = $2', params: [ctx, subscriptionId] },
      `EXISTS (SELECT 1 FROM ${this.S} WHERE ctx = $1 AND id = $2)`, { columns: DELIVERY_COLUMNS, decode: deliveryOf })
  }

  async getDelivery (db: Queryable, ctx: string, subscriptionId: string, id: string): Promise<DeliveryRow | null> {
    const { rows } = await db.query(`SELECT ${deliveryColumns()} FROM ${this.D} WHERE ctx = $1 AND subscription_id = $2 AND id = $3`, [ctx, subscriptionId, id])
    return rows.length === 0 ? null : deliveryOf(rows[0] as Record<string, unknown>)
  }

  /**
   * Schedules a FAILED delivery again at `at`, with the whole schedule ahead of it; null when it
   * is not FAILED (or not there). With `claim`, only when the claim is taken too, in the same
   * statement, and taken only while the delivery is FAILED (its row locked first, as a
   * subscription's write locks the subscription's): `HELD` when the key answers for another
   * request.
   */
  async retry (db: Queryable, ctx: string, subscriptionId: string, id: string, at: Date, claim: ClaimPart | null = null): Promise<DeliveryRow | null | typeof HELD> {
    const values = [ctx, subscriptionId, id, at]
    const failed = 'ctx = $1 AND subscription_id = $2 AND id = $3 AND status = \'FAILED\''
    const update = (also: string): string => `UPDATE ${this.D} SET status = 'PENDING', tries = 0, next_attempt_at = $4, ended_at = NULL
      WHERE ${failed}${also} RETURNING ${deliveryColumns()}`
    if (claim === null) {
      const { rows } = await db.query(update(''), values)
      return rows.length === 0 ? null : deliveryOf(rows[0] as Record<string, unknown>)
    }
    return await this.claimedWrite(db, this.claimedAt(this.D, failed, claim, values.length + 1),
      update(' AND EXISTS (SELECT 1 FROM k)'), [...values, ...claim.values], deliveryOf)
  }

  /**
   * Claims up to `limit` due deliveries of active subscriptions, at most `perSubscription`
   * of each and none of `skip` (this instance has enough of theirs in hand), for `owner`
   * until `at + leaseMillis`: one more attempt each. Oldest due first within a subscription.
   * Only the rows taken are locked. The subscriptions with something due are found by skipping
   * through the due index (`p`), one step per subscription with rows due, its first found: so
   * thousands of subscriptions with nothing due cost a claim one step, not one look each. What
   * waits for a retry is passed over within the index, row by row but without reading a row.
   * Each subscription's due rows are then read from its own index range, so a long queue due
   * costs a claim no more than a short one.
   * The entity comes as JSON: the driver parses a JSON array natively, where the text form of
   * a long text[] is read character by character in JavaScript, many times slower.
   */
  async claim (db: Queryable, owner: string, at: Date, leaseMillis: number, limit: number, skip: readonly string[], perSubscription: number): Promise<ClaimedDelivery[]> {
    // The second LATERAL, with its LIMIT, keeps the planner from joining `p` whole (a hash of
    // every due subscription): it reads `p` one subscription at a time until `limit` is met.
    const { rows } = await db.query<ClaimedDelivery>(`UPDATE ${this.D} AS d SET lease_owner = $1, lease_until = $2::timestamptz + $3 * interval '1 millisecond',
        attempt_count = d.attempt_count + 1, tries = d.tries + 1, last_attempt_at = $2
      FROM (WITH RECURSIVE p AS (
          (SELECT x.ctx, x.subscription_id AS sub FROM ${this.D} x
            WHERE x.status = 'PENDING' AND x.next_attempt_at <= $2 ORDER BY x.ctx, x.subscription_id LIMIT 1)
          UNION ALL
          SELECT y.ctx, y.sub FROM p CROSS JOIN LATERAL (
            SELECT x.ctx, x.subscription_id AS sub FROM ${this.D} x
            WHERE x.status = 'PENDING' AND (x.ctx, x.subscription_id) > (p.ctx, p.sub) AND x.next_attempt_at <= $2
            ORDER BY x.ctx, x.subscription_id LIMIT 1) AS y)
        SELECT c.id FROM p CROSS JOIN LATERAL (
          SELECT x.id FROM ${this.D} x
          WHERE x.ctx = p.ctx AND x.subscription_id = p.sub AND x.status = 'PENDING' AND x.next_attempt_at <= $2
            AND (x.lease_until IS NULL OR x.lease_until < $2) AND NOT (p.sub = ANY($5::text[]))
            AND EXISTS (SELECT FROM ${this.S} AS s WHERE s.ctx = p.ctx AND s.id = p.sub AND s.active)
          ORDER BY x.next_attempt_at LIMIT $6 FOR UPDATE OF x SKIP LOCKED) AS c
        LIMIT $4) AS n, ${this.S} AS s
      WHERE d.id = n.id AND s.ctx = d.ctx AND s.id = d.subscription_id
      RETURNING d.ctx, d.id, d.subscription_id AS "subscriptionId", d.event_type AS "eventType", d.attempt_count AS "attemptCount", d.created_at AS "createdDateTime",
        d.payload, array_to_json(d.entity) AS entity, d.request_id AS "requestId", d.tries, s.url, s.secret`,
    [owner, at, leaseMillis, limit, skip, perSubscription], { name: `${this.deliveries}_claim` })
    return rows
  }

  /**
   * Records how attempts ended (those `owner` still holds under the claim each was made by), and
   * counts each subscription's deliveries FAILED in a row: one that reaches `maxFailures` is
   * switched off. One statement, so the outcomes and the counts commit together: a process that
   * stops between them loses no failure, and a reader never sees one without the other. In the
   * order the attempts ended (`outcomes`), a success starts the count again; the count is taken
   * as it stands when the statement runs, not as it was when the attempt was claimed (another
   * instance may have recorded failures since, which the success, ending after them, undoes). A
   * subscription whose count that leaves as it is is not written.
   */
  async finish (db: Queryable, owner: string, outcomes: readonly AttemptOutcome[], maxFailures: number, at: Date): Promise<void> {
    if (outcomes.length === 0) return
    const count = '(CASE WHEN x.reset THEN 0 ELSE s.consecutive_failures END) + x.add'
    await db.query(`WITH x AS (
        SELECT * FROM unnest($2::text[], $3::text[], $4::integer[], $5::timestamptz[], $7::integer[]) WITH ORDINALITY AS x(id, status, code, next, attempt, n)),
      ended AS (UPDATE ${this.D} AS d SET status = x.status, last_status_code = x.code,
          next_attempt_at = x.next, lease_owner = NULL, lease_until = NULL, ended_at = CASE WHEN x.status = 'PENDING' THEN NULL ELSE $6::timestamptz END
        FROM x, ${this.S} AS s
        WHERE d.id = x.id AND d.lease_owner = $1 AND d.attempt_count = x.attempt AND s.ctx = d.ctx AND s.id = d.subscription_id
        RETURNING d.ctx, d.subscription_id AS sub, d.status, x.n),
      last AS (SELECT ctx, sub, status, n, max(n) FILTER (WHERE status = 'SUCCEEDED') OVER (PARTITION BY ctx, sub) AS success
        FROM ended WHERE status <> 'PENDING'),
      streak AS (SELECT ctx, sub, bool_or(success IS NOT NULL) AS reset,
          (count(*) FILTER (WHERE status <> 'SUCCEEDED' AND n > coalesce(success, 0)))::integer AS add
        FROM last GROUP BY ctx, sub)
      UPDATE ${this.S} AS s SET
        consecutive_failures = ${count},
        active = s.active AND ${count} < $8,
        etag = CASE WHEN s.active AND ${count} >= $8 THEN '"' || md5(random()::text) || '"' ELSE s.etag END,
        modified_at = CASE WHEN s.active AND ${count} >= $8 THEN $6 ELSE s.modified_at END
      FROM streak AS x
      WHERE s.ctx = x.ctx AND s.id = x.sub AND (x.reset AND s.consecutive_failures <> 0 OR x.add > 0)`,
    [owner, outcomes.map(o => o.id), outcomes.map(o => o.status), outcomes.map(o => o.statusCode), outcomes.map(o => o.next), at, outcomes.map(o => o.attempt), maxFailures], { name: `${this.deliveries}_finish` })
  }

  /**
   * Where the deliveries `owner` claimed ahead and holds go now that their turn has come: the
   * URL and secret of their subscription as it is, by id; those whose subscription was deleted
   * or switched off since the claim are left out.
   */
  async recheck (db: Queryable, owner: string, ids: readonly string[]): Promise<Map<string, { url: string, secret: string }>> {
    const { rows } = await db.query<{ id: string, url: string, secret: string }>(`SELECT d.id, s.url, s.secret FROM ${this.D} AS d
      JOIN ${this.S} AS s ON s.ctx = d.ctx AND s.id = d.subscription_id
      WHERE d.id = ANY($2::text[]) AND d.lease_owner = $1 AND s.active`, [owner, ids])
    return new Map(rows.map(r => [r.id, { url: r.url, secret: r.secret }]))
  }

  /**
   * Gives claimed attempts back unattempted (the instance stops): due again at once. Each under
   * the claim it was made by (its `attemptCount` then), as `finish` records them.
   */
  async release (db: Queryable, owner: string, claims: ReadonlyArray<Pick<DeliveryRow, 'id' | 'attemptCount'>>): Promise<void> {
    if (claims.length === 0) return
    await db.query(`UPDATE ${this.D} AS d SET lease_owner = NULL, lease_until = NULL, attempt_count = d.attempt_count - 1, tries = d.tries - 1
      FROM unnest($2::text[], $3::integer[]) AS x(id, attempt)
      WHERE d.id = x.id AND d.attempt_count = x.attempt AND d.lease_owner = $1`, [owner, claims.map(c => c.id), claims.map(c => c.attemptCount)])
  }
}
