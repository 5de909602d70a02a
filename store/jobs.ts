import type { CollectionQuery, FieldMap, Page } from '../model/query.js'
import type { FieldColumns } from './field-columns.js'
import { notifyTriggerSql } from './notify-trigger.js'
import { Purge, type PurgeResult } from './purge.js'
import { quoteIdent } from './quote.js'
import { readPage } from './read-page.js'
import { HELD, type ClaimPart } from './statement-parts.js'
import type { Migration, Queryable, Store } from './types.js'

/** Where a job stands: waiting to be claimed, running on an instance, or ended. */
export type JobStatus = 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED'

/** A job as stored. Dates are ISO 8601 strings in UTC. */
export interface JobRow {
  ctx: string
  id: string
  /** What runs it: the name a handler was registered under (e.g. `BULK`). */
  kind: string
  /** The collection it works on (e.g. `documents`). */
  collection: string
  /** The token subject that created it ('' without one): the only one who sees it. */
  subject: string
  status: JobStatus
  /** The handler's input, as accepted. */
  input: unknown
  operationCount: number
  completedCount: number
  result: unknown
  problem: unknown
  /** The requestId of the request that created it. */
  requestId: string | null
  /** How many times it was claimed. */
  attempts: number
  createdDateTime: string
  modifiedDateTime: string
  completedDateTime: string | null
}

/**
 * A job as its readers see it: without its input, which can be the largest part of it (a bulk
 * of thousands of operations) and is read only by the instance that runs it.
 */
export type JobView = Omit<JobRow, 'input'>

/** A job as its readers see it, its result the JSON text it is stored as (null without one). */
export type StoredJobView = Omit<JobView, 'result'> & { result: string | null }

/** A job as a list shows it (conventions: a collection's items are summaries): all but its result. */
export type JobSummaryView = Omit<JobView, 'result'>

/** How a job ends (`JobTable.finish`): SUCCEEDED with its result, or with the one written ahead (`stage`), or FAILED. */
export type JobEnd =
  | { status: 'SUCCEEDED', result: unknown, completedCount: number }
  | { status: 'SUCCEEDED', staged: true, completedCount: number }
  | { status: 'FAILED', problem: unknown }

/** What a new job is made of. */
export type NewJob = Pick<JobRow, 'ctx' | 'id' | 'kind' | 'collection' | 'subject' | 'input' | 'operationCount' | 'requestId'>

/** The SQL of the paths a jobs collection may filter and order on (alias `t`). */
const JOB_COLUMNS: FieldColumns = new Map([['id', 't.id'], ['status', 't.status'], ['createdDateTime', 't.created_at'], ['collection', 't.collection']])

/** A run's claim of a job: the instance that made it, and the job's `attempts` it made. */
export interface Holder {
  owner: string
  attempt: number
}

/** A claim on a job: the instance that holds it, until when (a lease it must renew). */
export interface Lease {
  owner: string
  /** Milliseconds from now. */
  millis: number
}

/**
 * The select list of a job, its columns qualified by `alias` when given; its input only for the
 * instance that runs it. Its result only once it SUCCEEDED: a run may write it ahead (`stage`).
 */
function columns (alias = '', input = true, result = true): string {
  const a = alias === '' ? '' : `${alias}.`
  return `${a}ctx, ${a}id, ${a}kind, ${a}collection, ${a}subject, ${a}status, ${input ? `${a}input, ` : ''}${a}operation_count AS "operationCount",
  ${a}completed_count AS "completedCount", ${result ? `CASE WHEN ${a}status = 'SUCCEEDED' THEN ${a}result END AS result, ` : ''}${a}problem, ${a}request_id AS "requestId", ${a}attempts,
  ${a}created_at AS "createdDateTime", ${a}modified_at AS "modifiedDateTime", ${a}completed_at AS "completedDateTime"`
}
const VIEW_COLUMNS = columns('', false)

function decode (row: Record<string, unknown>): JobRow {
  // Input, result and steps are JSON text, not jsonb: a client's strings go through as sent,
  // even those jsonb refuses (U+0000, a lone surrogate), for the work to judge each as a
  // request would, and its answer to quote them.
  row.input = JSON.parse(row.input as string)
  return decodeView(row) as JobRow
}

function decodeView (row: Record<string, unknown> | StoredJobView): JobView {
  const view = row as Record<string, unknown>
  if (typeof view.result === 'string') view.result = JSON.parse(view.result)
  return view as unknown as JobView
}

/** Ended jobs deleted per purge transaction (their steps go before them, by the thousand). */
const JOB_PURGE_BATCH = 100

/**
 * The jobs table and every statement on it. A job is a row written in the transaction that
 * accepts it; any instance claims it with `FOR UPDATE SKIP LOCKED` (two instances never take
 * the same one) and holds it by a lease it renews while it runs: when its instance dies, the
 * lease runs out and another instance takes the job up again. A job's steps (`<table>_steps`,
 * `jobs_steps` by default) record each unit of work in the unit's own transaction, so work
 * resumed after a crash skips what was done and never does it twice.
 */
export class JobTable {
  readonly table: string
  readonly steps: string
  /** The channel a job coming due is notified on (`Store.listen`): the table's name. */
  readonly channel: string
  private readonly T: string
  private readonly S: string
  private readonly purger: Purge

  /** `retention`: milliseconds an ended job (and its steps) is kept after it ended. */
  constructor (table = 'jobs', retention = 7 * 24 * 60 * 60 * 1000) {
    this.table = table
    this.steps = `${table}_steps`
    this.channel = table
    this.T = quoteIdent(table)
    this.S = quoteIdent(this.steps)
    // Open jobs have no completed_at: only ended ones are ever past keeping. Their steps go
    // first, a batch at a time: a job has up to one per operation (10,000 for a bulk). The jobs
    // go by the hundred: a bulk's result is megabytes of text, and on PGlite deleting 200
    // such rows (their TOAST with them) held the store's one connection for 0.2 s.
    this.purger = new Purge({ table, column: 'completed_at', retention, batchSize: JOB_PURGE_BATCH, children: [{ table: this.steps, on: [['ctx', 'ctx'], ['job_id', 'id']] }] })
  }

  /** Deletes the jobs that ended longer than the retention ago, their steps with them (store/purge.ts). `now` replaces the database's clock. */
  async purge (store: Store, now: Date | null = null): Promise<PurgeResult> {
    return await this.purger.run(store, now)
  }

  migrations (): Migration[] {
    const t = this.table
    return [{
      id: `jobs:${t}:v1`,
      sql: `CREATE TABLE IF NOT EXISTS ${this.T} (
        ctx text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        kind text NOT NULL,
        collection text NOT NULL,
        subject text COLLATE "C" NOT NULL,
        status text NOT NULL CONSTRAINT ${quoteIdent(`${t}_status_check`)} CHECK (status IN ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')),
        input text NOT NULL,
        operation_count integer NOT NULL,
        completed_count integer NOT NULL DEFAULT 0,
        result text,
        problem jsonb,
        request_id text,
        attempts integer NOT NULL DEFAULT 0,
        lease_owner text,
        lease_until timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        modified_at timestamptz(3) NOT NULL DEFAULT now(),
        completed_at timestamptz(3),
        CONSTRAINT ${quoteIdent(`${t}_pkey`)} PRIMARY KEY (ctx, id)
      );
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${t}_open_idx`)} ON ${this.T} (created_at, ctx, id) WHERE status IN ('PENDING', 'RUNNING');
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${t}_subject_idx`)} ON ${this.T} (ctx, subject, created_at DESC, id DESC);
      CREATE INDEX IF NOT EXISTS ${quoteIdent(`${t}_ended_idx`)} ON ${this.T} (completed_at) WHERE completed_at IS NOT NULL;
      CREATE TABLE IF NOT EXISTS ${this.S} (
        ctx text COLLATE "C" NOT NULL,
        job_id text COLLATE "C" NOT NULL,
        step integer NOT NULL,
        outcome text NOT NULL,
        CONSTRAINT ${quoteIdent(`${this.steps}_pkey`)} PRIMARY KEY (ctx, job_id, step),
        CONSTRAINT ${quoteIdent(`${this.steps}_job_fkey`)} FOREIGN KEY (ctx, job_id) REFERENCES ${this.T} (ctx, id) ON DELETE CASCADE
      )`
    }, {
      // Instances wake when a job is written, whoever writes it, and when one is given back.
      id: `jobs:${t}:v2-notify`,
      sql: notifyTriggerSql({
        table: t,
        due: { columns: ['lease_owner'], when: "OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL AND NEW.status IN ('PENDING', 'RUNNING')" }
      })
    }]
  }

  /**
   * Writes a new PENDING job; run it in the transaction that accepts the work. With `claim`,
   * only when the claim is taken too, in the same statement: `HELD` when it answers for another
   * request, and nothing was written.
   */
  async insert (db: Queryable, job: NewJob): Promise<JobRow>
  async insert (db: Queryable, job: NewJob, claim: ClaimPart): Promise<JobRow | typeof HELD>
  async insert (db: Queryable, job: NewJob, claim: ClaimPart | null = null): Promise<JobRow | typeof HELD> {
    const values = [job.ctx, job.id, job.kind, job.collection, job.subject, JSON.stringify(job.input), job.operationCount, job.requestId]
    const columns = 'ctx, id, kind, collection, subject, status, input, operation_count, request_id'
    const { rows } = claim === null
      ? await db.query(`INSERT INTO ${this.T} (${columns}) VALUES ($1, $2, $3, $4, $5, 'PENDING', $6, $7, $8) RETURNING ${VIEW_COLUMNS}`, values)
      : await db.query(`WITH ${claim.sql(values.length + 1, null)}
        INSERT INTO ${this.T} (${columns})
        SELECT $1::text, $2::text, $3::text, $4::text, $5::text, 'PENDING', $6::text, $7::integer, $8::text WHERE EXISTS (SELECT 1 FROM k)
        RETURNING ${VIEW_COLUMNS}`, [...values, ...claim.values])
    if (rows.length === 0) return HELD
    // The input as given: not read back and parsed again.
    return { ...decodeView(rows[0] as Record<string, unknown>), input: job.input }
  }

  /** The job, without its input, when `subject` created it in `ctx`; null otherwise. */
  async get (db: Queryable, ctx: string, subject: string, id: string): Promise<JobView | null> {
    const job = await this.getStored(db, ctx, subject, id)
    return job === null ? null : decodeView(job)
  }

  /**
   * As `get`, with the result left as the JSON text it is stored as: a reader that sends it on
   * (a job's monitor) need not parse it and write it again, megabytes for a large bulk.
   */
  async getStored (db: Queryable, ctx: string, subject: string, id: string): Promise<StoredJobView | null> {
    const { rows } = await db.query<StoredJobView>(`SELECT ${VIEW_COLUMNS} FROM ${this.T} WHERE ctx = $1 AND subject = $2 AND id = $3`, [ctx, subject, id])
    return rows[0] ?? null
  }

  /**
   * A finished page of `subject`'s jobs in `ctx` of the listed collections, as `query` selects
   * them (store/read-page.ts), each without its result: a bulk's is megabytes, and a page of
   * them tens. The paths of `fields` are among `id`, `status`, `createdDateTime` and `collection`.
   */
  async page (db: Queryable, query: CollectionQuery, fields: FieldMap, scope: { ctx: string, subject: string, collections: readonly string[] }): Promise<Page<JobSummaryView>> {
    return await readPage(db, query, fields, {
      select: columns('t', false, false),
      from: `${this.T} t`,
      where: 't.ctx = $1 AND t.subject = $2 AND t.collection = ANY($3::text[])',
      params: [scope.ctx, scope.subject, scope.collections]
    }, { columns: JOB_COLUMNS, decode: (row) => row as unknown as JobSummaryView })
  }

  /**
   * Claims the oldest job no instance holds (PENDING, or RUNNING with an expired lease) for
   * `lease.owner`, among `kinds`: RUNNING, a new lease, one more attempt. Null when there is none.
   */
  async claim (db: Queryable, kinds: readonly string[], lease: Lease): Promise<JobRow | null> {
    const { rows } = await db.query(`UPDATE ${this.T} AS j SET status = 'RUNNING', lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond',
        attempts = j.attempts + 1, modified_at = now()
      FROM (SELECT ctx, id FROM ${this.T}
        WHERE status IN ('PENDING', 'RUNNING') AND (lease_until IS NULL OR lease_until < now()) AND kind = ANY($3::text[])
        ORDER BY created_at, ctx, id LIMIT 1 FOR UPDATE SKIP LOCKED) AS next
      WHERE j.ctx = next.ctx AND j.id = next.id
      RETURNING ${columns('j')}`,
    [lease.owner, lease.millis, kinds])
    return rows.length === 0 ? null : decode(rows[0] as Record<string, unknown>)
  }

  /**
   * Locks the job inside the transaction `db` if `owner` still holds it under the claim that
   * made `attempt` (the job's `attempts` then); false when its lease went to another claim, of
   * another instance or of this one. Every unit of work commits only under the lock of a held
   * job, so a run that lost its job (it stalled past the lease) cannot commit work for it.
   */
  async hold (db: Queryable, ctx: string, id: string, owner: string, attempt: number): Promise<boolean> {
    return await this.advance(db, ctx, id, { owner, attempt }, [], null)
  }

  /**
   * `hold`, in one statement with the record of `steps` and, unless null, the count of
   * operations done: the unit of work's last statement in its transaction. False when `holder`
   * no longer holds the job; the caller then rolls the transaction back, steps and all.
   */
  async advance (db: Queryable, ctx: string, id: string, holder: Holder, steps: ReadonlyArray<{ step: number, outcome: unknown }>, completedCount: number | null): Promise<boolean> {
    const values: unknown[] = [ctx, id, holder.owner, holder.attempt]
    let sql = ''
    if (steps.length > 0) {
      values.push(...this.stepValues(steps))
      sql = `WITH s AS (${this.insertSteps(5)}) `
    }
    const held = "ctx = $1 AND id = $2 AND lease_owner = $3 AND attempts = $4 AND status = 'RUNNING'"
    if (completedCount === null) {
      sql += `SELECT 1 AS held FROM ${this.T} WHERE ${held} FOR UPDATE`
    } else {
      values.push(completedCount)
      sql += `UPDATE ${this.T} SET completed_count = $${values.length}, modified_at = now() WHERE ${held} RETURNING 1 AS held`
    }
    const { rows } = await db.query(sql, values)
    return rows.length > 0
  }

  /** Extends `owner`'s lease of the claim that made `attempt`; false when it no longer holds the job. */
  async renew (db: Queryable, ctx: string, id: string, lease: Lease, attempt: number): Promise<boolean> {
    const { rows } = await db.query(`UPDATE ${this.T} SET lease_until = now() + $4 * interval '1 millisecond'
      WHERE ctx = $1 AND id = $2 AND lease_owner = $3 AND attempts = $5 AND status = 'RUNNING' RETURNING 1 AS renewed`, [ctx, id, lease.owner, lease.millis, attempt])
    return rows.length > 0
  }

  /**
   * Gives the job up, if the claim that made `attempt` holds it: another instance may claim it
   * at once (its instance stops), or once `waitMillis` have passed (the database was unavailable).
   */
  async release (db: Queryable, ctx: string, id: string, owner: string, attempt: number, waitMillis = 0): Promise<void> {
    // A wait keeps the lease's end with no owner: no claim takes the job before it.
    await db.query(`UPDATE ${this.T} SET lease_until = CASE WHEN $5::integer > 0 THEN now() + $5 * interval '1 millisecond' END, lease_owner = NULL, modified_at = now()
      WHERE ctx = $1 AND id = $2 AND lease_owner = $3 AND attempts = $4 AND status = 'RUNNING'`, [ctx, id, owner, attempt, waitMillis])
  }

  /**
   * Writes `result` as the job's result ahead of its end, while the claim that made
   * `holder.attempt` holds it: readers see it only once the job ends SUCCEEDED by a `finish`
   * that keeps it (`staged`). Outside the transaction of the job's last work, so that
   * transaction holds the database only to end the job: on the embedded store, every request
   * waits for it. False when no row was written.
   */
  async stage (db: Queryable, ctx: string, id: string, result: unknown, holder: Holder): Promise<boolean> {
    const { rows } = await db.query(`UPDATE ${this.T} SET result = $3 WHERE ctx = $1 AND id = $2 AND lease_owner = $4 AND attempts = $5 AND status = 'RUNNING' RETURNING 1 AS staged`,
      [ctx, id, JSON.stringify(result), holder.owner, holder.attempt])
    return rows.length > 0
  }

  /**
   * Ends the job: SUCCEEDED with its result (`staged`: the one `stage` wrote, kept as it is
   * stored), or FAILED with a problem body. With `holder`, only while the claim that made
   * `holder.attempt` still holds it (`hold`'s condition, in the same statement): a run that lost
   * its job ends nothing. False when no row was ended.
   */
  async finish (db: Queryable, ctx: string, id: string, end: JobEnd, holder: Holder | null = null): Promise<boolean> {
    const values: unknown[] = [ctx, id]
    let set: string
    if (end.status === 'FAILED') {
      values.push(JSON.stringify(end.problem))
      set = "status = 'FAILED', result = NULL, problem = $3::jsonb"
    } else if ('staged' in end) {
      values.push(end.completedCount)
      set = "status = 'SUCCEEDED', completed_count = $3"
    } else {
      values.push(JSON.stringify(end.result), end.completedCount)
      set = "status = 'SUCCEEDED', result = $3, completed_count = $4"
    }
    let where = 'ctx = $1 AND id = $2'
    if (holder !== null) {
      values.push(holder.owner, holder.attempt)
      where += ` AND lease_owner = $${values.length - 1} AND attempts = $${values.length} AND status = 'RUNNING'`
    }
    const { rows } = await db.query(`UPDATE ${this.T} SET ${set}, lease_owner = NULL, lease_until = NULL,
        modified_at = now(), completed_at = now() WHERE ${where} RETURNING 1 AS ended`, values)
    return rows.length > 0
  }

  /** Records the outcome of the job's steps; run it in the transaction of the steps' work. */
  async recordSteps (db: Queryable, ctx: string, id: string, steps: ReadonlyArray<{ step: number, outcome: unknown }>): Promise<void> {
    if (steps.length === 0) return
    await db.query(this.insertSteps(3), [ctx, id, ...this.stepValues(steps)])
  }

  /** The insert of steps given as two arrays, parameters `$n` and `$n+1`, in the job of `$1`, `$2`. */
  private insertSteps (n: number): string {
    return `INSERT INTO ${this.S} (ctx, job_id, step, outcome)
      SELECT $1, $2, x.step, x.outcome FROM unnest($${n}::integer[], $${n + 1}::text[]) AS x(step, outcome)`
  }

  private stepValues (steps: ReadonlyArray<{ step: number, outcome: unknown }>): [number[], string[]] {
    return [steps.map(s => s.step), steps.map(s => JSON.stringify(s.outcome))]
  }

  /** The outcomes recorded so far, by step. */
  async stepsOf (db: Queryable, ctx: string, id: string): Promise<Map<number, unknown>> {
    const { rows } = await db.query<{ step: number, outcome: unknown }>(`SELECT step, outcome FROM ${this.S} WHERE ctx = $1 AND job_id = $2 ORDER BY step`, [ctx, id])
    return new Map(rows.map(r => [r.step, JSON.parse(r.outcome as string)]))
  }
}
