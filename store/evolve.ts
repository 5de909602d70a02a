import { ConstraintViolation, MigrationFailed, SchemaMismatch, type SchemaDifference } from './errors.js'
import { LOCK_SQL } from './migrate.js'
import { readTable, renderTable } from './table/catalog.js'
import { guarded, planTable } from './table/evolve.js'
import { defaultFillfactor, tableDdl, type TableSpec } from './table/schema.js'
import type { Migration, Store, StoreKind, StoreLogger, Tx } from './types.js'

/** A change made to a table so that it matches its definition. */
export interface SchemaChange {
  table: string
  /** In words: `created`, `added column "summary"`, `created index "documents_by_kind"`. */
  change: string
}

export interface SchemaComparison {
  /** Made in the transaction given, in order. */
  changes: SchemaChange[]
  /** What stays different: when there is any, the caller rolls the changes back. */
  refusals: SchemaDifference[]
}

/**
 * Compares each table with its definition, in the order given (referenced tables first), inside
 * `tx`: creates the missing tables, makes the changes that cannot fail or lose data, and lists
 * the others (store/table/evolve.ts). A change the rows break (a constraint violation) is rolled
 * back alone, to its savepoint, and listed too. Roll `tx` back when anything is listed.
 * `kind`: the store's, whose fillfactor a table gets when its definition names none
 * (`defaultFillfactor`); null leaves those tables' as they are.
 */
export async function compareTables (tx: Tx, specs: readonly TableSpec[], kind: StoreKind | null = null): Promise<SchemaComparison> {
  const changes: SchemaChange[] = []
  const refusals: SchemaDifference[] = []
  for (const spec of specs) {
    const fillfactor = spec.fillfactor ?? (kind === null ? null : defaultFillfactor(kind))
    const live = await readTable(tx, spec.table)
    if (live === null) {
      await tx.exec(tableDdl(spec, fillfactor))
      changes.push({ table: spec.table, change: 'created' })
      continue
    }
    const plan = planTable(spec, live, await renderTable(tx, spec, live), fillfactor)
    refusals.push(...plan.refusals)
    const broken = new Set<string>()
    for (const step of plan.steps) {
      if (step.columns.some(c => broken.has(c))) continue
      const refusal = step.unlessRowsBreakIt
      if (refusal === undefined) {
        await tx.exec(step.sql.join('\n'))
      } else {
        try {
          await tx.savepoint(async (s) => { await s.exec(step.sql.join('\n')) })
        } catch (err) {
          if (!(err instanceof ConstraintViolation)) throw err
          refusals.push(refusal)
          for (const c of step.columns) broken.add(c)
          continue
        }
      }
      changes.push({ table: spec.table, change: step.change })
    }
  }
  return { changes, refusals }
}

export interface EvolveOptions {
  /** Told about each change made. Default: silent. */
  logger?: StoreLogger
}

/**
 * Brings the tables to their definitions at boot, in one transaction under the migrations' lock
 * (instances starting together take turns): creates the missing ones and makes the safe
 * changes, or, when anything else differs, changes nothing and throws a `SchemaMismatch` that
 * lists every difference with the SQL that would resolve it. Returns the changes made.
 */
export async function evolveTables (store: Store, specs: readonly TableSpec[], opts: EvolveOptions = {}): Promise<SchemaChange[]> {
  // An index over a big table may rightly take long: no statement timeout.
  const changes = await store.transaction(async (tx) => {
    await tx.query(LOCK_SQL)
    const { changes, refusals } = await compareTables(tx, specs, store.kind)
    if (refusals.length > 0) throw new SchemaMismatch(refusals)
    return changes
  }, { statementTimeout: false })
  for (const c of changes) opts.logger?.info({ table: c.table, change: c.change }, 'store: table changed to match its definition')
  return changes
}

const ROLLBACK = Symbol('rollback')

/**
 * What the comparison would find once the `pending` migrations ran, without changing anything:
 * they and the comparison run in one transaction, rolled back at the end. A pending migration
 * that fails throws a `MigrationFailed` naming it.
 */
export async function previewTables (store: Store, specs: readonly TableSpec[], pending: readonly Migration[]): Promise<SchemaComparison> {
  let result: SchemaComparison | undefined
  try {
    await store.transaction(async (tx) => {
      await tx.query(LOCK_SQL)
      for (const m of pending) {
        try {
          if (typeof m.sql === 'string') await tx.exec(m.sql)
          else await m.sql(tx)
        } catch (err) {
          throw new MigrationFailed(m.id.replace(/^file:/, ''), err)
        }
      }
      result = await compareTables(tx, specs, store.kind)
      throw ROLLBACK
    }, { statementTimeout: false })
  } catch (err) {
    if (err !== ROLLBACK) throw err
  }
  return result as SchemaComparison
}

/**
 * The text of a migration file proposing `differences`' SQL, each statement in the form that
 * does nothing where its table is missing (`guarded`): the files run before the tables are made,
 * so on a database made from scratch they find none.
 */
export function migrationText (file: string, differences: readonly SchemaDifference[]): string {
  const head = [
    `-- ${file}: applied once, in one transaction, before the tables are compared with the definitions.`,
    '-- Statements on a table do nothing when it does not exist yet (IF EXISTS, to_regclass), so the file',
    '-- also passes on a database made from scratch, whose tables are created from the definitions after it.'
  ]
  if (differences.length === 0) {
    return [...head, '', '-- The tables match the definitions: nothing to propose. Write the statements of your change here.', ''].join('\n')
  }
  head.push('-- Written by `svc-conventions migrate new` from the differences found: review every statement.')
  const body = differences.map(d => {
    const where = d.column === null ? `table "${d.table}"` : `table "${d.table}", column "${d.column}"`
    return [`-- ${where}: ${d.difference}.`, ...d.sql.map(s => guarded(s, d.table))].join('\n')
  })
  return [...head, '', body.join('\n\n'), ''].join('\n')
}
