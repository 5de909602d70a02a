import type { SchemaDifference } from '../errors.js'
import { quoteIdent } from '../quote.js'
import { tableColumns, type LiveConstraint, type LiveTable, type RenderedTable } from './catalog.js'
import type { Column } from './columns.js'
import { collationDdl, constraintNames, enumCheckDdl, fillfactorDdl, foreignKeyDdl, literal, plannedIndexes, uniqueIndexDdl, uniqueKeys, type IndexKey, type TableSpec } from './schema.js'

/*
 * How a resource table that exists already is brought to its definition at boot. What cannot
 * fail and loses nothing is applied: new columns (nullable, or filled with their default, or
 * required on an empty table), indexes, enum values added, the "C" collation, and constraints
 * the definition has that the rows already meet. Anything else is refused, with the SQL that
 * would fix it: a column dropped or renamed, a type changed, a constraint or an enum value the
 * definition no longer has, a constraint the rows break.
 */

/** A change the boot makes by itself. */
export interface EvolutionStep {
  /** What it changes, in words, for the log. */
  change: string
  /** Its statements, in order. */
  sql: string[]
  /** The columns it needs: skipped when one of them cannot be brought to the definition. */
  columns: readonly string[]
  /**
   * Reported instead when the database refuses the step with a constraint violation: the rows
   * break what it adds (a NOT NULL column on a table with rows, duplicates under a new unique
   * set, values outside a new check, references to missing rows).
   */
  unlessRowsBreakIt?: SchemaDifference
}

export interface TablePlan {
  /** In the order they run: columns, collation, NOT NULL, checks, unique sets, references, indexes. */
  steps: EvolutionStep[]
  refusals: SchemaDifference[]
}

/** The values of an enum CHECK as PostgreSQL writes it back: `CHECK ((status = ANY (ARRAY['A'::text, 'B'::text])))`. */
export function checkValues (def: string): string[] {
  return [...def.matchAll(/'((?:[^']|'')*)'/g)].map(m => (m[1] as string).replaceAll("''", "'"))
}

/** A value of the definition (a default) as a SQL literal of the column's type. */
export function valueSql (c: Pick<Column, 'kind' | 'sqlType'>, value: unknown): string {
  if (value === null) return 'NULL'
  if (c.kind === 'json') return `${literal(JSON.stringify(value))}::jsonb`
  if (c.kind === 'string-array') return `ARRAY[${(value as unknown[]).map(v => literal(String(v))).join(', ')}]::text[]`
  return `${literal(String(value))}::${c.sqlType}`
}

/** A value for rows that have none, which whoever writes the migration replaces with the right one. */
function placeholder (c: Column): string {
  const values: Record<Column['kind'], unknown> = {
    string: '',
    enum: c.enumValues?.[0] ?? '',
    'date-time': '1970-01-01T00:00:00Z',
    date: '1970-01-01',
    decimal: '0',
    int64: '0',
    int32: 0,
    number: 0,
    boolean: false,
    'string-array': [],
    json: {}
  }
  return valueSql(c, values[c.kind])
}

const typeSql = (c: Column): string => `${c.sqlType}${c.sqlType === 'text' ? ' COLLATE "C"' : ''}`

/**
 * Compares a table with its definition, rendered by the database (`renderTable`), and plans
 * the steps that bring it there; refuses the differences it does not resolve alone.
 */
export function planTable (spec: TableSpec, live: LiveTable, rendered: RenderedTable, fillfactor: number | null = spec.fillfactor ?? null): TablePlan {
  const t = spec.table
  const T = quoteIdent(t)
  const alter = (rest: string): string => `ALTER TABLE ${T} ${rest};`
  const expected = tableColumns(spec)
  const wanted = new Map(expected.map(c => [c.field, c]))
  const liveColumns = new Map(live.columns.map(c => [c.name, c]))
  const liveIndexes = new Map(live.indexes.map(i => [i.name, i]))
  const typeOf = (c: Column): string => rendered.types.get(c.field) ?? c.sqlType
  const refusals: SchemaDifference[] = []
  const refuse = (column: string | null, difference: string, sql: string[]): void => { refusals.push({ table: t, column, difference, sql }) }
  /** Columns whose existence or type is in question: no step touches them. */
  const blocked = new Set<string>()

  // Columns. A column of the table the definition lacks is a field dropped or renamed; when the
  // definition has a new field of the same type, a rename is the likelier, and proposed.
  const missing = expected.filter(c => !liveColumns.has(c.field))
  const extra = live.columns.filter(c => !wanted.has(c.name))
  const renamedTo = new Map<string, Column>()
  for (const old of extra) {
    const target = missing.find(c => typeOf(c) === old.type && ![...renamedTo.values()].includes(c))
    if (target !== undefined) renamedTo.set(old.name, target)
  }
  for (const old of extra) {
    blocked.add(old.name)
    const drop = alter(`DROP COLUMN ${quoteIdent(old.name)}`)
    const target = renamedTo.get(old.name)
    if (target === undefined) {
      refuse(old.name, 'in the table but not in the definition: a field dropped (this drops the column and its values) or renamed (rename the column instead)', [drop])
    } else {
      blocked.add(target.field)
      refuse(old.name, `in the table but not in the definition, which has a new field "${target.field}" of the same type: if the field was renamed, this renames the column (if it was dropped instead: ${drop})`, renameSql(spec, live, old.name, target.field))
    }
  }

  const adds: EvolutionStep[] = []
  for (const c of missing) {
    if (blocked.has(c.field)) continue
    const column = `ADD COLUMN ${c.ident} ${typeSql(c)}`
    if (c.default !== undefined && c.default !== null) {
      // ADD … DEFAULT fills the rows there are; the default then goes, as the writes fill it themselves.
      adds.push({
        change: `added column "${c.field}", its default in the rows there were`,
        sql: [alter(`${column}${c.nullable ? '' : ' NOT NULL'} DEFAULT ${valueSql(c, c.default)}`), alter(`ALTER COLUMN ${c.ident} DROP DEFAULT`)],
        columns: [c.field]
      })
    } else if (c.nullable) {
      adds.push({ change: `added column "${c.field}"`, sql: [alter(column)], columns: [c.field] })
    } else {
      const value = placeholder(c)
      adds.push({
        change: `added required column "${c.field}" (the table had no rows)`,
        sql: [alter(`${column} NOT NULL`)],
        columns: [c.field],
        unlessRowsBreakIt: {
          table: t,
          column: c.field,
          difference: 'a new required field without a default, and the table has rows: they need a value',
          sql: [`-- The rows there are get ${value}: put the value they should have.`, alter(`${column} NOT NULL DEFAULT ${value}`), alter(`ALTER COLUMN ${c.ident} DROP DEFAULT`)]
        }
      })
    }
  }

  const nullability: EvolutionStep[] = []
  for (const c of expected) {
    const l = liveColumns.get(c.field)
    if (l === undefined) continue
    const type = typeOf(c)
    if (l.type !== type) {
      blocked.add(c.field)
      refuse(c.field, `type ${l.type} in the table, ${type} in the definition: this converts the values (check that the cast fits them)`, [alter(`ALTER COLUMN ${c.ident} TYPE ${typeSql(c)} USING ${c.ident}::${c.sqlType}`)])
      continue
    }
    if (!l.notNull && !c.nullable) {
      const fill = c.default !== undefined && c.default !== null ? [`UPDATE ${T} SET ${c.ident} = ${valueSql(c, c.default)} WHERE ${c.ident} IS NULL;`] : []
      nullability.push({
        change: fill.length === 0 ? `made "${c.field}" required` : `made "${c.field}" required, its default in the rows without a value`,
        sql: [...fill, alter(`ALTER COLUMN ${c.ident} SET NOT NULL`)],
        columns: [c.field],
        unlessRowsBreakIt: {
          table: t,
          column: c.field,
          difference: 'required in the definition, but rows of the table have no value',
          sql: [`-- Rows without a value get ${placeholder(c)}: put the value they should have.`, `UPDATE ${T} SET ${c.ident} = ${placeholder(c)} WHERE ${c.ident} IS NULL;`, alter(`ALTER COLUMN ${c.ident} SET NOT NULL`)]
        }
      })
    } else if (l.notNull && c.nullable) {
      refuse(c.field, 'NOT NULL in the table, nullable in the definition', [alter(`ALTER COLUMN ${c.ident} DROP NOT NULL`)])
    }
  }

  const notC = live.columns.filter(c => c.notC && wanted.has(c.name) && !blocked.has(c.name)).map(c => c.name)
  const collation: EvolutionStep[] = notC.length === 0 ? [] : [{ change: `text columns in the "C" collation: ${notC.join(', ')}`, sql: [`${collationDdl(t)};`], columns: notC }]

  // Constraints are known by their deterministic names; others of the same kind are someone's own, left alone.
  const named = (kind: 'f' | 'c', suffix: (table: string, field: string) => string): Map<string, LiveConstraint & { field: string }> => {
    const out = new Map<string, LiveConstraint & { field: string }>()
    for (const k of live.constraints) {
      if (k.type !== kind) continue
      const field = live.columns.map(c => c.name).find(f => suffix(t, f) === k.name)
      if (field !== undefined) out.set(field, { ...k, field })
    }
    return out
  }

  const checks: EvolutionStep[] = []
  const liveChecks = named('c', constraintNames.check)
  for (const c of expected) {
    if (blocked.has(c.field)) continue
    const name = quoteIdent(constraintNames.check(t, c.field))
    const had = liveChecks.get(c.field)
    if (c.enumValues === undefined) {
      if (had !== undefined) refuse(c.field, 'a check of its values in the table, none in the definition', [alter(`DROP CONSTRAINT ${name}`)])
      continue
    }
    const check = enumCheckDdl(t, { ...c, enumValues: c.enumValues })
    const list = c.enumValues.map(literal).join(', ')
    if (had === undefined) {
      checks.push({
        change: `added the check of the values of "${c.field}"`,
        sql: [alter(`ADD ${check}`)],
        columns: [c.field],
        unlessRowsBreakIt: {
          table: t,
          column: c.field,
          difference: `allowed values ${list} in the definition, but rows of the table hold others`,
          sql: [`-- Rows with another value: SELECT ctx, id, ${c.ident} FROM ${T} WHERE ${c.ident} NOT IN (${list});`, alter(`ADD ${check}`)]
        }
      })
      continue
    }
    const values = checkValues(had.def)
    const removed = values.filter(v => !(c.enumValues as readonly string[]).includes(v))
    const added = c.enumValues.filter(v => !values.includes(v))
    if (removed.length > 0) {
      const gone = removed.map(literal).join(', ')
      refuse(c.field, `values ${gone} allowed in the table, not in the definition: rows holding them need another`, [
        `-- Rows holding a removed value get ${literal(c.enumValues[0] as string)}: put the value they should have.`,
        `UPDATE ${T} SET ${c.ident} = ${literal(c.enumValues[0] as string)} WHERE ${c.ident} IN (${gone});`,
        alter(`DROP CONSTRAINT ${name}, ADD ${check}`)
      ])
    } else if (added.length > 0) {
      checks.push({ change: `added ${added.map(literal).join(', ')} to the values of "${c.field}"`, sql: [alter(`DROP CONSTRAINT ${name}, ADD ${check}`)], columns: [c.field] })
    }
  }

  const uniques: EvolutionStep[] = []
  const keys = uniqueKeys(spec)
  for (const key of keys) {
    if (blocked.has(key.field)) continue
    const name = quoteIdent(key.name)
    const l = liveIndexes.get(key.name)
    const create = key.where === null ? alter(`ADD CONSTRAINT ${name} UNIQUE (ctx, ${quoteIdent(key.field)})`) : `${uniqueIndexDdl(t, key)};`
    if (l === undefined) {
      uniques.push({
        change: `added the unique set of "${key.field}"`,
        sql: [create],
        columns: [key.field],
        unlessRowsBreakIt: {
          table: t,
          column: key.field,
          difference: 'unique in the definition, but rows of the table share values',
          sql: [`-- The values held twice: SELECT ctx, ${quoteIdent(key.field)}, count(*) FROM ${T} GROUP BY 1, 2 HAVING count(*) > 1;`, create]
        }
      })
      continue
    }
    const shape = rendered.shapes.get(key.name) as string
    if (l.shape === shape) continue
    const drop = l.constraint ? alter(`DROP CONSTRAINT ${name}`) : `DROP INDEX ${name};`
    // A unique set narrowed to the rows a predicate holds for cannot fail, and loses nothing.
    if (!l.partial && key.where !== null && `${l.shape} WHERE` === shape.slice(0, l.shape.length + 6)) {
      uniques.push({ change: `the unique set of "${key.field}" holds only where ${key.where}`, sql: [drop, create], columns: [key.field] })
    } else {
      const over = (s: string): string => s.replace(/^UNIQUE USING btree /, '')
      refuse(key.field, `unique over ${over(l.shape)} in the table, over ${over(shape)} in the definition`, [drop, create])
    }
  }
  for (const i of live.indexes) {
    if (!i.unique || i.primary) continue
    const field = live.columns.map(c => c.name).find(f => constraintNames.unique(t, f) === i.name)
    if (field === undefined || blocked.has(field) || keys.some(k => k.field === field)) continue
    refuse(field, 'unique in the table, not in the definition', [i.constraint ? alter(`DROP CONSTRAINT ${quoteIdent(i.name)}`) : `DROP INDEX ${quoteIdent(i.name)};`])
  }

  const references: EvolutionStep[] = []
  const liveKeys = named('f', constraintNames.foreignKey)
  for (const r of spec.references) {
    if (blocked.has(r.field)) continue
    const had = liveKeys.get(r.field)
    const add = alter(`ADD ${foreignKeyDdl(t, r)}`)
    if (had === undefined) {
      references.push({
        change: `added the reference of "${r.field}" to "${r.table}"`,
        sql: [add],
        columns: [r.field],
        unlessRowsBreakIt: {
          table: t,
          column: r.field,
          difference: `references "${r.table}" in the definition, but rows of the table hold ids "${r.table}" does not have`,
          sql: [`-- Rows without their "${r.table}" row: SELECT ctx, id, ${quoteIdent(r.field)} FROM ${T} c WHERE ${quoteIdent(r.field)} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${quoteIdent(r.table)} p WHERE p.ctx = c.ctx AND p.id = c.${quoteIdent(r.field)});`, add]
        }
      })
    } else if (had.refTable !== r.table || had.columns.join(',') !== `ctx,${r.field}` || had.refColumns.join(',') !== 'ctx,id') {
      refuse(r.field, `references ${had.def.slice(had.def.indexOf('REFERENCES ') + 11)} in the table, "${r.table}" (ctx, id) in the definition`, [alter(`DROP CONSTRAINT ${quoteIdent(had.name)}, ADD ${foreignKeyDdl(t, r)}`)])
    }
  }
  for (const [field, k] of liveKeys) {
    if (blocked.has(field) || !wanted.has(field) || spec.references.some(r => r.field === field)) continue
    refuse(field, `references "${k.refTable ?? ''}" in the table, nothing in the definition`, [alter(`DROP CONSTRAINT ${quoteIdent(k.name)}`)])
  }

  const pkey = constraintNames.primaryKey(t)
  const pk = liveIndexes.get(pkey)
  if (pk === undefined || !pk.primary || pk.shape !== rendered.shapes.get(pkey)) {
    refuse(null, `no primary key (ctx, id) named "${pkey}"`, [alter(`ADD CONSTRAINT ${quoteIdent(pkey)} PRIMARY KEY (ctx, id)`)])
  }

  const indexes: EvolutionStep[] = []
  for (const index of plannedIndexes(spec)) {
    if (index.kind === 'unique') continue
    const l = liveIndexes.get(index.name)
    if (l === undefined) {
      indexes.push({ change: `created index "${index.name}"`, sql: [`${index.ddl()};`], columns: index.columns })
    } else if (l.shape !== rendered.shapes.get(index.name)) {
      // Not unique: rebuilding it cannot fail. Its keys changed with the query compiler's SQL or a field's type.
      indexes.push({ change: `rebuilt index "${index.name}", whose keys changed`, sql: [`DROP INDEX ${quoteIdent(index.name)};`, `${index.ddl()};`], columns: index.columns })
    }
  }

  // Pages written from now on leave the room; those written before stay as they are.
  const storage: EvolutionStep[] = fillfactor === null || live.fillfactor === fillfactor
    ? []
    : [{ change: `fillfactor ${fillfactor} for the pages written from now on`, sql: [alter(`SET (${fillfactorDdl(fillfactor)})`)], columns: [] }]

  const steps = [...adds, ...collation, ...nullability, ...checks, ...uniques, ...references, ...indexes, ...storage]
  return { steps: steps.filter(s => !s.columns.some(c => blocked.has(c))), refusals }
}

/**
 * `RENAME COLUMN`, and the constraints and indexes named after the column renamed with it, so
 * that the table then matches the definition by name too.
 */
function renameSql (spec: TableSpec, live: LiveTable, from: string, to: string): string[] {
  const t = spec.table
  const T = quoteIdent(t)
  const out = [`ALTER TABLE ${T} RENAME COLUMN ${quoteIdent(from)} TO ${quoteIdent(to)};`]
  const indexes = new Map(live.indexes.map(i => [i.name, i]))
  const constraints = new Set(live.constraints.map(k => k.name))
  const rename = (old: string, name: string): void => {
    const index = indexes.get(old)
    if (index?.constraint === true || constraints.has(old)) out.push(`ALTER TABLE ${T} RENAME CONSTRAINT ${quoteIdent(old)} TO ${quoteIdent(name)};`)
    else if (index !== undefined) out.push(`ALTER INDEX ${quoteIdent(old)} RENAME TO ${quoteIdent(name)};`)
  }
  rename(constraintNames.unique(t, from), constraintNames.unique(t, to))
  rename(constraintNames.check(t, from), constraintNames.check(t, to))
  rename(constraintNames.foreignKey(t, from), constraintNames.foreignKey(t, to))
  rename(constraintNames.index(t, from), constraintNames.index(t, to))
  for (const index of spec.indexes) {
    if (!index.keys.some(k => k.path.split('.')[0] === to)) continue
    const keys = index.keys.map((k): IndexKey => {
      const [head, ...rest] = k.path.split('.')
      return head === to ? { ...k, path: [from, ...rest].join('.') } : k
    })
    rename(constraintNames.queryIndex(t, keys), index.name)
  }
  return out
}

/**
 * A migration file's form of a statement: it also runs on a database made from scratch, where
 * the files run before the tables exist, so a statement on a table does nothing when it is missing.
 */
export function guarded (statement: string, table: string): string {
  if (statement.startsWith('--')) return statement
  for (const head of ['ALTER TABLE ', 'ALTER INDEX ', 'DROP INDEX ']) {
    if (statement.startsWith(head)) return `${head}IF EXISTS ${statement.slice(head.length)}`
  }
  return `DO $$ BEGIN IF to_regclass(${literal(quoteIdent(table))}) IS NOT NULL THEN ${statement} END IF; END $$;`
}
