import { PGlite, type MemoryFS } from '@electric-sql/pglite'
import type { Filter, OrderingTerm, Page, Paging } from '../../model/query.js'
import { readPage } from '../../store/read-page.js'
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

export class DocTable {
  // The store's cached empty cluster when there is one (several times faster than initdb).
  readonly db = new PGlite(snapshotOptions())
  private byId = new Map<string, Doc>()

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

  /** One page through the SQL back end (readPage: one statement), its ids mapped back to the API objects. */
  async page (filter: Filter | null, ordering: readonly OrderingTerm[], paging: Paging): Promise<Page<Doc>> {
    // A leading caller parameter, as the resource layer adds its partition or parent condition.
    const source = { select: 't."id"', from: 'docs t', where: 't."id" <> $1', params: ['never-an-id'] }
    return await readPage(this.db, { filter, ordering, paging }, fields, source, { decode: (row) => this.byId.get(row.id as string) as Doc })
  }

  async close (): Promise<void> {
    await this.db.close()
  }
}
