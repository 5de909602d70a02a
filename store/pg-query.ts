import { createRequire } from 'node:module'
import pg from 'pg'

/**
 * One statement's query for the `pg` driver: pg's own `Query`, except for what it does with
 * each answer's row description. pg builds a parser list and a null-prototype row template
 * for every result, from scratch, though a prepared statement answers with the same columns
 * each time. Here both are made once per column list (names and types) and kept: the list
 * of parsers pg reads rows with, and the maker of the row objects (`RowShape.make`).
 *
 * A named statement is described once per connection: PostgreSQL's answer to the first
 * execution carries its row description, and later ones are bound and executed without asking
 * for it again (`prepare`), read with the shape the first one gave. pg asks on every execution,
 * and parses a description of every column each time.
 *
 * It reaches into pg's `Query` (`_result`, `_accumulateRows`, `prepare`, `hasBeenParsed`,
 * `_getRows`) and its connection (`bind`), which `test/store/pg-query.test.ts` pins on the
 * installed version, so an upgrade that renames them fails a test rather than a request.
 */

type Parser = (text: string) => unknown

/** Builds one row object from a row's values, in the statement's column order. */
export type RowMaker = (values: unknown[]) => Record<string, unknown>

/** What the rows of one column list are read with. */
export interface RowShape {
  parsers: Parser[]
  make: RowMaker
  /** The columns, as the row description gave them. */
  fields: pg.FieldDef[]
  /** The type set the parsers come from. */
  types: pg.CustomTypesConfig
}

/** The members of pg's connection `prepare` uses. */
interface Connection {
  bind: (config: { portal: string, statement: string, values: unknown[], binary: boolean | undefined, valueMapper: (value: unknown) => unknown }) => void
  sync: () => void
}

/** The members of pg's Query and its Result this class uses. */
interface QueryInternals {
  name: string | undefined
  queryMode: string | undefined
  _rowMode: string | undefined
  portal: string
  values: unknown[]
  binary: boolean | undefined
  rows: number | undefined
  _result: { fields: pg.FieldDef[], _parsers: Parser[] | undefined, rowAsArray: boolean, parseRow: unknown, _parseRowAsArray: unknown }
  _accumulateRows: boolean
  prepare (connection: Connection): void
  hasBeenParsed (connection: Connection): boolean
  _getRows (connection: Connection, rows: number | undefined): void
  handleError (err: unknown, connection: Connection): void
}

const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown }

/** By connection, the shape of each named statement it has described since it last parsed it. */
const described = new WeakMap<Connection, Map<string, RowShape>>()

// Made without a callback: the client gives the query the one its query() call is passed.
const PgQuery = pg.Query as unknown as new (text: string, values: unknown[]) => pg.Query & QueryInternals

// Shapes by type set, then by column list; statements are few and fixed, the cap only bounds
// odd callers.
const shapesByTypes = new WeakMap<pg.CustomTypesConfig, Map<string, RowShape>>()
const MAX_SHAPES = 256

export class ArrayQuery extends PgQuery {
  /** The shape of the rows, once the row description came (none for a statement without rows). */
  shape: RowShape | undefined = undefined
  readonly #types: pg.CustomTypesConfig
  /** Where the description this query asked for is kept: its connection's, for a named statement. */
  #describes: Map<string, RowShape> | undefined = undefined

  /** `name` makes it a prepared statement, parsed once per connection. */
  constructor (text: string, values: unknown[], name: string | undefined, types: pg.CustomTypesConfig) {
    // Given a config object, pg copies it through its property descriptors, a slow path on
    // every statement; given the text and values, it builds its own. The rest is set here.
    super(text, values)
    this.name = name
    this.queryMode = 'extended'
    this._rowMode = 'array'
    this._result.rowAsArray = true
    this._result.parseRow = this._result._parseRowAsArray
    this.#types = types
  }

  override prepare (connection: Connection): void {
    const name = this.name
    if (name === undefined || name === '') {
      super.prepare(connection)
      return
    }
    let shapes = described.get(connection)
    if (shapes === undefined) described.set(connection, shapes = new Map())
    let shape = this.hasBeenParsed(connection) ? shapes.get(name) : undefined
    // The parsers depend on the type set too: a query with another set asks again.
    if (shape?.types !== this.#types) shape = undefined
    if (shape === undefined) {
      // Parsed now (or again, after pg forgot it), or not described yet: pg's way, which asks.
      shapes.delete(name)
      this.#describes = shapes
      super.prepare(connection)
      return
    }
    try {
      connection.bind({ portal: this.portal, statement: name, values: this.values, binary: this.binary, valueMapper: prepareValue })
    } catch (err) {
      // A value pg cannot serialize fails the query; nothing was sent. pg's own way also drops
      // the statement on the server, but not from its list of those parsed, so that each later
      // execution of it on this connection would fail: here it stays. The sync ends the query.
      connection.sync()
      this.handleError(err, connection)
      return
    }
    this.#use(shape)
    this._getRows(connection, this.rows)
  }

  // pg's own also starts a second result for a script's next statement: one statement here.
  handleRowDescription (msg: { fields: pg.FieldDef[] }): void {
    const shape = shapeOf(msg.fields, this.#types)
    this.#describes?.set(this.name as string, shape)
    this.#use(shape)
  }

  #use (shape: RowShape): void {
    this.shape = shape
    this._result.fields = shape.fields
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
      make: rowMaker(fields.map((f) => f.name)),
      fields: [...fields],
      types
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
