import pg from 'pg'

/**
 * One statement's query for the `pg` driver: pg's own `Query`, except for what it does with
 * each answer's row description. pg builds a parser list and a null-prototype row template
 * for every result, from scratch, though a prepared statement answers with the same columns
 * each time. Here both are made once per column list (names and types) and kept: the list
 * of parsers pg reads rows with, and the maker of the row objects (`RowShape.make`).
 *
 * It reaches into two members of pg's `Query` (`_result` and `_accumulateRows`), which
 * `test/store/pg-query.test.ts` pins on the installed version, so an upgrade that renames
 * them fails a test rather than a request.
 */

type Parser = (text: string) => unknown

/** Builds one row object from a row's values, in the statement's column order. */
export type RowMaker = (values: unknown[]) => Record<string, unknown>

/** What the rows of one column list are read with. */
export interface RowShape {
  parsers: Parser[]
  make: RowMaker
}

/** The members of pg's Query and its Result this class sets. */
interface QueryInternals {
  _result: { fields: pg.FieldDef[], _parsers: Parser[] | undefined }
  _accumulateRows: boolean
}

// Made without a callback: the client gives the query the one its query() call is passed.
const PgQuery = pg.Query as unknown as new (config: pg.QueryArrayConfig) => pg.Query & QueryInternals

// Shapes by type set, then by column list; statements are few and fixed, the cap only bounds
// odd callers.
const shapesByTypes = new WeakMap<pg.CustomTypesConfig, Map<string, RowShape>>()
const MAX_SHAPES = 256

export class ArrayQuery extends PgQuery {
  /** The shape of the rows, once the row description came (none for a statement without rows). */
  shape: RowShape | undefined = undefined
  readonly #types: pg.CustomTypesConfig

  constructor (config: pg.QueryArrayConfig, types: pg.CustomTypesConfig) {
    super(config)
    this.#types = types
  }

  // pg's own also starts a second result for a script's next statement: one statement here.
  handleRowDescription (msg: { fields: pg.FieldDef[] }): void {
    const shape = shapeOf(msg.fields, this.#types)
    this.shape = shape
    this._result.fields = msg.fields
    this._result._parsers = shape.parsers
    this._accumulateRows = true
  }
}

function shapeOf (fields: readonly pg.FieldDef[], types: pg.CustomTypesConfig): RowShape {
  let key = ''
  for (const f of fields) key += `${f.name}\u0000${f.dataTypeID}\u0000${f.format}\u0000`
  let shapes = shapesByTypes.get(types)
  if (shapes === undefined) shapesByTypes.set(types, shapes = new Map())
  let shape = shapes.get(key)
  if (shape === undefined) {
    shape = {
      parsers: fields.map((f) => types.getTypeParser(f.dataTypeID, f.format === 'binary' ? 'binary' : 'text') as Parser),
      make: rowMaker(fields.map((f) => f.name))
    }
    if (shapes.size < MAX_SHAPES) shapes.set(key, shape)
  }
  return shape
}

/**
 * The maker of a column list's row objects, as pg would make them (a column named twice keeps
 * the first position and the last value). Each comes from an object literal made for the
 * column list, so all rows of a statement share one fast, fixed shape: pg builds each by
 * copying a null-prototype dictionary object, slow to make, to read and to collect.
 */
function rowMaker (names: readonly string[]): RowMaker {
  // A quoted "__proto__" key in a literal would set the prototype: copy and assign, as pg does.
  if (names.includes('__proto__')) {
    const template: Record<string, unknown> = Object.create(null)
    for (const n of names) template[n] = null
    return (values) => {
      const row = { ...template }
      for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i]
      return row
    }
  }
  // Keys are JSON string literals (valid JavaScript), values indexed: no input reaches the code.
  // eslint-disable-next-line no-new-func
  return new Function('v', `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}}`) as RowMaker
}
