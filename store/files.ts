import { quoteIdent } from './quote.js'
import type { AttachedPart } from './statement-parts.js'
import type { Migration, Queryable } from './types.js'

/** What is stored of a file besides its bytes. */
export interface FileFacts {
  mediaType: string
  filename: string | null
  byteCount: number
  /** Strong entity tag of the bytes, quoted as the ETag header carries it. */
  etag: string
}

/** A stored file: its facts and its bytes. */
export interface StoredFile extends FileFacts {
  bytes: Buffer
}

type FactsRow = { media_type: string, filename: string | null, byte_count: number | string, etag: string }

/** PGlite gives bytea as a Uint8Array, pg as a Buffer: a Buffer over the same memory either way (no copy). */
function asBuffer (value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
}

function factsOf (row: FactsRow): FileFacts {
  return { mediaType: row.media_type, filename: row.filename, byteCount: Number(row.byte_count), etag: row.etag }
}

/**
 * The files attached to the entities of one resource, one row per entity and execution
 * context, the bytes in a `bytea` column, deleted with the entity's row (a hard delete). Written
 * by the statement of the entity's own change (`putPart`, `removePart`), so the entity's
 * description of its file and the file agree. A Buffer parameter goes to a PostgreSQL server in
 * binary form, so the bytes are not re-encoded on the way.
 */
export class FileContents {
  readonly table: string
  /** The table of the entities the files belong to. */
  readonly owner: string
  private readonly putSql: AttachedPart['sql']
  private readonly removing: AttachedPart
  private readonly getSql: string
  private readonly factsSql: string

  constructor (table: string, owner: string) {
    const T = quoteIdent(table)
    this.table = table
    this.owner = owner
    this.putSql = (n, w) => `f AS (INSERT INTO ${T} (ctx, id, media_type, filename, byte_count, etag, bytes)
        SELECT ${w.ctx}, ${w.source}.id, $${n}::text, $${n + 1}::text, $${n + 2}::bigint, $${n + 3}::text, $${n + 4}::bytea FROM ${w.source}
        ON CONFLICT (ctx, id) DO UPDATE SET media_type = EXCLUDED.media_type, filename = EXCLUDED.filename,
          byte_count = EXCLUDED.byte_count, etag = EXCLUDED.etag, bytes = EXCLUDED.bytes)`
    this.removing = {
      key: `${table}:remove`,
      values: [],
      sql: (_n, w) => `f AS (DELETE FROM ${T} AS f USING ${w.source} WHERE f.ctx = ${w.ctx} AND f.id = ${w.source}.id)`
    }
    this.getSql = `SELECT media_type, filename, byte_count, etag, bytes FROM ${T} WHERE ctx = $1 AND id = $2`
    this.factsSql = `SELECT media_type, filename, byte_count, etag FROM ${T} WHERE ctx = $1 AND id = $2`
  }

  /** The table, created through the store's migrations. */
  migrations (): Migration[] {
    return [{
      id: `files:${this.table}:v1`,
      sql: `CREATE TABLE IF NOT EXISTS ${quoteIdent(this.table)} (
        ctx text NOT NULL,
        id text NOT NULL,
        media_type text NOT NULL,
        filename text,
        byte_count bigint NOT NULL,
        etag text NOT NULL,
        bytes bytea NOT NULL,
        CONSTRAINT ${quoteIdent(`${this.table}_pkey`)} PRIMARY KEY (ctx, id),
        -- A file lives as long as its entity: deleting the entity's row deletes it.
        CONSTRAINT ${quoteIdent(`${this.table}_owner_fkey`)} FOREIGN KEY (ctx, id) REFERENCES ${quoteIdent(this.owner)} (ctx, id) ON DELETE CASCADE
      )`
    }]
  }

  /** Stores `file` as the file of the entity a write writes, replacing any it had: part of that write's statement. */
  putPart (file: StoredFile): AttachedPart {
    return { key: `${this.table}:put`, values: [file.mediaType, file.filename, file.byteCount, file.etag, file.bytes], sql: this.putSql }
  }

  /** Removes the file of the entity a write writes, if it has one: part of that write's statement. */
  removePart (): AttachedPart {
    return this.removing
  }

  /** The file of entity `id` with its bytes; null when it has none. */
  async get (db: Queryable, ctx: string, id: string): Promise<StoredFile | null> {
    const { rows } = await db.query<FactsRow & { bytes: Uint8Array }>(this.getSql, [ctx, id])
    const row = rows[0]
    return row === undefined ? null : { ...factsOf(row), bytes: asBuffer(row.bytes) }
  }

  /** What is known of the file of entity `id` without reading its bytes; null when it has none. */
  async facts (db: Queryable, ctx: string, id: string): Promise<FileFacts | null> {
    const { rows } = await db.query<FactsRow>(this.factsSql, [ctx, id])
    const row = rows[0]
    return row === undefined ? null : factsOf(row)
  }
}
