import { randomUUID } from 'node:crypto'
import { Unavailable } from '../../store/errors.js'
import type { JobEnd, JobRow, JobTable, Lease } from '../../store/jobs.js'
import type { Store, Tx } from '../../store/types.js'
import { isProblemError, problems, type ProblemError } from '../problem/index.js'
import { LeaseLoop } from '../shared/lease-loop.js'

/** What a handler gets to run its job: transactions under the job's lease, and its recorded steps. */
export interface JobRun {
  readonly job: JobRow
  /**
   * Runs `fn` in a transaction that holds the job: if this instance lost it meanwhile (it
   * stalled past its lease and another instance took the job up), nothing of `fn` commits
   * and the run ends. Every unit of the job's work belongs in one of these. The job's row is
   * locked by the transaction's last statement, `record`'s, `progress`'s or `finish`'s (the
   * check costs none of its own), else by one more before `COMMIT`: not while `fn` works.
   */
  transaction: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>
  /** The steps recorded by earlier runs of this job (it is being taken up again), by step number. */
  steps: () => Promise<Map<number, unknown>>
  /**
   * Records steps' outcomes in `tx`, the transaction of their work, and, when given, how many
   * operations are done: one statement. Call it last in `tx` (see `transaction`).
   */
  record: (tx: Tx, steps: ReadonlyArray<{ step: number, outcome: unknown }>, completedCount?: number) => Promise<void>
  /** Sets how many operations are done, in `tx`. */
  progress: (tx: Tx, completedCount: number) => Promise<void>
  /**
   * Ends the job SUCCEEDED with `result`, in `tx`, the transaction of its last work: the work
   * and the job's end commit together, and nothing records the result a second time (once
   * that transaction committed, the runner writes no end of its own).
   */
  finish: (tx: Tx, result: unknown, completedCount: number) => Promise<void>
  /**
   * Writes `result` as the job's result ahead of its end, outside any transaction, under the
   * job's lease; nobody sees it before the job ends SUCCEEDED. An end given this same object
   * (`finish`, or the handler's return), unchanged since, then only marks the job SUCCEEDED:
   * the transaction of its last work does not write a large result. Any other result is
   * written as usual.
   */
  stage: (result: unknown) => Promise<void>
  /**
   * Lets the requests that arrived meanwhile go first (a turn of the event loop), between two
   * long stretches of the job's work outside a transaction: a read of many rows and the
   * decisions made on them, say. On the embedded store every statement runs in this thread, and
   * no request is read until the next turn.
   */
  turn: () => Promise<void>
}

/**
 * A job's work. It returns the job's result (the job is then SUCCEEDED) or throws: a problem
 * (`problems.*`) ends the job FAILED with that problem; an unavailable database gives the job
 * back to be tried again later; anything else ends it FAILED with a 500 problem naming nothing
 * of the fault.
 */
export type JobHandler = (run: JobRun) => Promise<{ result: unknown, completedCount: number }>

/** Runs of a job's transaction after a serialization failure. */
const TRANSACTION_RETRIES = 3

/**
 * A turn of the event loop. The embedded store runs each statement in this thread, and a run's
 * statements outside a transaction settle as promises only: without a turn before them, the
 * server would read no request from a job's claim to its first transaction (which turns itself).
 */
async function turn (): Promise<void> {
  await new Promise<void>((resolve) => { setImmediate(resolve) })
}

/** Thrown out of a run whose job another instance took over. */
class LeaseLost extends Error {}

export interface RunnerOptions {
  store: Store
  table: JobTable
  handlers: ReadonlyMap<string, JobHandler>
  leaseMillis: number
  pollMillis: number
  concurrency: number
  maxAttempts: number
  /** The wait before the first retry of a job the database was unavailable to; doubled for each next one, at most leaseMillis. */
  retryMillis: number
  log: { warn: (obj: object, msg: string) => void, error: (obj: object, msg: string) => void }
}

/**
 * Claims and runs jobs on this instance: it looks for work when the database notifies that a
 * job was written or given back (any instance's, however written: store/jobs.ts), at once when
 * `wake` is called (this instance accepted a job), and every `pollMillis` while idle, a safety
 * net for what no notification announces (a lease that ran out, a notification lost while the
 * connection was down, no LISTEN behind PgBouncer). It runs at most `concurrency` at a time,
 * and renews each job's lease while it runs.
 */
export class Runner {
  /** This instance, as a lease owner. */
  readonly owner = `instance-${randomUUID()}`
  private readonly o: RunnerOptions
  private running = 0
  private readonly inFlight = new Set<Promise<void>>()
  private readonly loop: LeaseLoop
  /**
   * Jobs this instance gave up while the database could not record it (an outage): given back
   * at its next look, once the database answers, rather than left to their lease to run out.
   */
  private readonly unreleased = new Map<string, { ctx: string, id: string, attempt: number }>()

  constructor (o: RunnerOptions) {
    this.o = o
    this.loop = new LeaseLoop({
      store: o.store,
      channel: o.table.channel,
      look: async () => {
        await this.look()
        return this.o.pollMillis
      },
      notified: () => { this.wake() },
      again: () => { this.wake() },
      unheard: 'jobs: cannot listen for new jobs; looking for them every pollMillis only',
      log: o.log
    })
  }

  private get stopped (): boolean {
    return this.loop.stopped
  }

  async start (): Promise<void> {
    await this.loop.start()
  }

  /** Looks for work now (a job was accepted here). */
  wake (): void {
    this.loop.soon(0)
  }

  /** Stops claiming; lets the jobs in flight end, or gives them back at the lease's next renewal. */
  async stop (): Promise<void> {
    await this.loop.stop()
    await Promise.allSettled([...this.inFlight])
  }

  private lease (): Lease {
    return { owner: this.owner, millis: this.o.leaseMillis }
  }

  /** Claims jobs while there is room and work (the loop then waits until the next poll). */
  private async look (): Promise<void> {
    try {
      for (const [key, job] of this.unreleased) {
        await this.o.table.release(this.o.store, job.ctx, job.id, this.owner, job.attempt)
        this.unreleased.delete(key)
      }
      while (!this.stopped && this.running < this.o.concurrency) {
        const job = await this.o.table.claim(this.o.store, [...this.o.handlers.keys()], this.lease())
        if (job === null) break
        this.running++
        const p = this.run(job).finally(() => {
          this.running--
          this.inFlight.delete(p)
          this.wake()
        })
        this.inFlight.add(p)
      }
    } catch (err) {
      this.o.log.warn({ err }, 'jobs: could not look for work; trying again later')
    }
  }

  private async run (job: JobRow): Promise<void> {
    const { store, table } = this.o
    const owner = this.owner
    let lost = false
    let renewing = false
    const renew = setInterval(() => {
      // One renewal at a time: a renewal waits for a transaction of the job that has locked its
      // row (from its last statement to its end), and on the embedded store for any (all of an
      // ATOMIC bulk is one); one more per tick would hold one more connection each meanwhile.
      if (renewing) return
      renewing = true
      table.renew(store, job.ctx, job.id, this.lease(), job.attempts)
        .then((held) => { if (!held) lost = true }, () => {})
        .finally(() => { renewing = false })
    }, Math.max(1, Math.floor(this.o.leaseMillis / 3)))
    renew.unref()
    const holder = { owner, attempt: job.attempts }
    // The result this run wrote ahead (`stage`), if any.
    let staged: unknown
    const endOf = (result: unknown, completedCount: number): JobEnd => staged !== undefined && result === staged
      ? { status: 'SUCCEEDED', staged: true, completedCount }
      : { status: 'SUCCEEDED', result, completedCount }
    // The transactions in which the handler ended the job (`finish`), and whether one committed.
    const endedIn = new WeakSet<Tx>()
    let ended = false
    // The transactions in which a statement of the job's already checked and locked its claim.
    const heldIn = new WeakSet<Tx>()
    const held = (tx: Tx, holds: boolean): void => {
      if (!holds) throw new LeaseLost()
      heldIn.add(tx)
    }
    const run: JobRun = {
      job,
      // Run again after a deadlock or a lost race, as a request's write is: `fn` decides afresh.
      transaction: async (fn) => {
        // Whether the run of `fn` that committed ended the job.
        let ends = false
        const out = await store.transaction(async (tx) => {
          ends = false
          heldIn.delete(tx)
          endedIn.delete(tx)
          if (lost || this.stopped) throw new LeaseLost()
          const value = await fn(tx)
          // Locked last, so that a renewal of the lease does not wait for the work.
          if (!heldIn.has(tx)) held(tx, await table.hold(tx, job.ctx, job.id, owner, job.attempts))
          ends = endedIn.has(tx)
          return value
        }, { retries: TRANSACTION_RETRIES })
        if (ends) ended = true
        return out
      },
      steps: async () => await table.stepsOf(store, job.ctx, job.id),
      record: async (tx, steps, completedCount) => { held(tx, await table.advance(tx, job.ctx, job.id, holder, steps, completedCount ?? null)) },
      progress: async (tx, n) => { held(tx, await table.advance(tx, job.ctx, job.id, holder, [], n)) },
      finish: async (tx, result, completedCount) => {
        held(tx, await table.finish(tx, job.ctx, job.id, endOf(result, completedCount), holder))
        endedIn.add(tx)
      },
      stage: async (result) => {
        await turn()
        if (lost || this.stopped || !await table.stage(store, job.ctx, job.id, result, holder)) throw new LeaseLost()
        staged = result
      },
      turn
    }
    try {
      const handler = this.o.handlers.get(job.kind) as JobHandler
      // The requests that arrived while the job was claimed (and its input read) go first.
      await turn()
      const { result, completedCount } = await handler(run)
      if (!ended) {
        // The runner's own end is one statement, under the job's lease as a transaction of it is.
        await turn()
        if (lost || this.stopped || !await table.finish(store, job.ctx, job.id, endOf(result, completedCount), holder)) throw new LeaseLost()
      }
    } catch (err) {
      await this.failed(job, err)
    } finally {
      clearInterval(renew)
    }
  }

  /** A run that threw: given back, to be tried again, or the job ends FAILED. */
  private async failed (job: JobRow, err: unknown): Promise<void> {
    const { store, table } = this.o
    try {
      if (err instanceof LeaseLost) {
        // Stopping: give the job back so another instance takes it up without waiting for the lease.
        if (this.stopped) await table.release(store, job.ctx, job.id, this.owner, job.attempts)
        return
      }
      if (err instanceof Unavailable && job.attempts < this.o.maxAttempts) {
        // Given back to be claimed after a wait that doubles with each attempt: taken up again at
        // once, every attempt would be spent within a second of an outage.
        const wait = Math.min(this.o.retryMillis * 2 ** (job.attempts - 1), this.o.leaseMillis)
        this.o.log.warn({ err, job: job.id, retryInMillis: wait }, 'jobs: the database is unavailable; the job will be tried again')
        await table.release(store, job.ctx, job.id, this.owner, job.attempts, wait)
        return
      }
      const problem = problemOf(err, job)
      if (!isProblemError(err)) this.o.log.error({ err, job: job.id }, 'jobs: the job failed')
      await table.finish(store, job.ctx, job.id, { status: 'FAILED', problem }, { owner: this.owner, attempt: job.attempts })
    } catch (again) {
      // Given back once the database answers again; when this instance stops first, the lease runs out.
      this.unreleased.set(`${job.ctx}/${job.id}`, { ctx: job.ctx, id: job.id, attempt: job.attempts })
      this.o.log.warn({ err: again, job: job.id }, 'jobs: could not record the end of the job; it will be given back and taken up again once the database answers')
    }
  }
}

/** The problem body a FAILED job shows: the handler's own problem, else a 500 naming nothing of the fault. */
function problemOf (err: unknown, job: JobRow): Record<string, unknown> {
  const problem: ProblemError = isProblemError(err)
    ? err
    : err instanceof Unavailable
      ? problems.unavailable('The database stayed unavailable for every attempt; send the request again.')
      : problems.internal('The job could not be completed; send the request again, and quote the requestId if it persists.')
  const body: Record<string, unknown> = { title: problem.title, status: problem.statusCode }
  if (problem.detail !== undefined) body.detail = problem.detail
  if (problem.instance !== undefined) body.instance = problem.instance
  body.requestId = job.requestId ?? job.id
  if (problem.context !== undefined) body.context = problem.context
  return body
}
