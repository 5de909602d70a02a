import type { Context, Outcome } from '../context.js'

/** One rule of the convention as the check sees it from outside. */
export interface Rule {
  /** Stable id, used by --only and --skip and named in docs/convention.md. */
  id: string
  /** The convention section it checks. */
  section: string
  /** What it checks, in one line. */
  title: string
  /** Needs --writes (it creates, changes or deletes entities of its own). */
  writes?: boolean
  /** Why it cannot be observed from outside: listed, reported not checked, never probed. */
  unobservable?: string
  /** Uses the entities the check created when --writes allows it (runs after they exist). */
  usesEntities?: boolean
  /** Runs after every probe, over every exchange seen (sends nothing). */
  observes?: boolean
  run?: (ctx: Context) => Promise<Outcome>
}
