import { PGlite, type MemoryFS } from '@electric-sql/pglite'
import type { Filter, OrderingTerm, Page, Paging } from '../../model/query.js'
import { readPage, type RowSource } from '../../store/read-page.js'
import { readTemplate, templateFile } from '../../store/pglite-template.js'
import { fields } from './fixtures.js'

/** A document as the API shapes it (and as the in-memory evaluator reads it). */
export interface Doc {
  id: string
  name: string
  description: string | null
  status: string
  pageCount: number | null
  byteCount: string | null
  amount: string | null
  effectiveDate: string | null
  publishedDateTime: string | null
  active: boolean
  flagged: boolean | null
  tags: string[]
  metadata: { source: { system: string, region: string | null } | null, score?: number } | null
}

const COLUMNS = ['id', 'name', 'description', 'status', 'pageCount', 'byteCount', 'amount', 'effectiveDate', 'publishedDateTime', 'active', 'flagged', 'tags', 'metadata'] as const
const CASTS = ['text', 'text', 'text', 'text', 'integer', 'bigint', 'numeric', 'date', 'timestamptz', 'boolean', 'boolean', 'text[]', 'jsonb']

/** The storage model: typed columns for top-level scalars, text[] for tags, jsonb for the nested object. */
const DDL = `CREATE TABLE docs (
  "id" text PRIMARY KEY, "name" text NOT NULL, "description" text, "status" text NOT NULL,
  "pageCount" integer, "byteCount" bigint, "amount" numeric, "effectiveDate" date,
  "publishedDateTime" timestamptz(3), "active" boolean NOT NULL, "flagged" boolean,
  "tags" text[] NOT NULL, "metadata" jsonb)`

function snapshotOptions (): { fs?: MemoryFS } {
  const snapshot = readTemplate(templateFile())
  return snapshot === undefined ? {} : { fs: snapshot.memoryFs() }
}

/** What the table runs its statements on: a bare PGlite, or a store (either engine). */
export interface DocDatabase extends RowSource {
  exec: (sql: string) => Promise<unknown>
}

export class DocTable {
  readonly db: DocDatabase
  private readonly own: PGlite | undefined
  private byId = new Map<string, Doc>()

  /** On `db`, or on a PGlite of its own, from the store's cached empty cluster when there is one (several times faster than initdb). */
  constructor (db?: DocDatabase) {
    this.own = db === undefined ? new PGlite(snapshotOptions()) : undefined
    this.db = db ?? this.own as PGlite
  }

  /** A fresh table holding `docs`. */
  async load (docs: readonly Doc[]): Promise<void> {
    await this.db.exec(`DROP TABLE IF EXISTS docs; ${DDL}`)
    this.byId = new Map(docs.map((doc) => [doc.id, doc]))
    if (docs.length === 0) return
    const params: unknown[] = []
    const rows = docs.map((doc) => `(${COLUMNS.map((column, i) => {
      const value = doc[column]
      params.push(column === 'metadata' && value !== null ? JSON.stringify(value) : value)
      return `$${params.length}::${CASTS[i] as string}`
    }).join(', ')})`)
    await this.db.query(`INSERT INTO docs VALUES ${rows.join(', ')}`, params)
  }

  /**
   * One page through the SQL back end (readPage: one statement), its ids mapped back to the API
   * objects; read through `via` (the table's database by default), which may answer for it.
   */
  async page (filter: Filter | null, ordering: readonly OrderingTerm[], paging: Paging, via: RowSource = this.db): Promise<Page<Doc>> {
    // A leading caller parameter, as the resource layer adds its partition or parent condition.
    const source = { select: 't."id"', from: 'docs t', where: 't."id" <> $1', params: ['never-an-id'] }
    return await readPage(via, { filter, ordering, paging }, fields, source, { decode: (row) => this.byId.get(row.id as string) as Doc })
  }

  /** Closes its own PGlite; a database it was given stays open. */
  async close (): Promise<void> {
    await this.own?.close()
  }
}
