// Seeds the reference service's tables with many documents, fast: plain SQL through pg,
// `INSERT … SELECT … FROM generate_series` in batches, values derived from the row number
// (deterministic, varied, unique names), the table's plain indexes dropped during the load
// and rebuilt after it (one sorted build beats a million index insertions), then ANALYZE.
// The tables must exist: start the service on the database first, it migrates them.
//
//   node bench/seed.js postgres://postgres@127.0.0.1:5432/postgres [count]
import pg from 'pg'

const SYSTEMS = ['erp', 'crm', 'scanner', 'email', 'portal']
const REGIONS = ['eu-west', 'us-east', 'ap-south']
const TAGS = ['urgent', 'finance', 'legal', 'hr', 'ops', 'archive']

/** The author ids the documents are spread over. */
export function authorIds (authors) {
  return Array.from({ length: authors }, (_, i) => `bench-author-${i + 1}`)
}

// Every value from g.i (the row number) and h (a 31-bit hash of it), so a run is reproducible.
// `md5(...)::uuid` gives ids in random order, as the service's randomUUID() does.
const SELECT = `
SELECT
  $1, md5('doc' || i)::uuid::text, '"' || substr(md5('etag' || i), 1, 16) || '"',
  created, 'seed', created + (h % 10000) * interval '1 minute', 'seed',
  (ARRAY['Invoice', 'Contract', 'Order', 'Report', 'Memo'])[1 + h % 5] || ' ' || lpad(i::text, 7, '0'),
  CASE WHEN h % 10 < 3 THEN NULL ELSE 'Seeded document ' || i || ', about ' || (ARRAY['rent', 'travel', 'supplies', 'licences'])[1 + h % 4] END,
  ($2::text[])[1 + i % array_length($2::text[], 1)],
  CASE WHEN h % 10 < 3 THEN 'DRAFT' WHEN h % 10 < 8 THEN 'PUBLISHED' ELSE 'ARCHIVED' END,
  CASE WHEN (h / 10) % 10 < 3 THEN 'PURCHASE_ORDER' WHEN (h / 10) % 10 < 7 THEN 'INVOICE' ELSE 'CONTRACT' END,
  (h / 100) % 1001,
  CASE WHEN h % 10 = 9 THEN NULL ELSE ((h / 100) % 1001) * 20000 + h % 20000 END,
  CASE WHEN h % 5 = 0 THEN NULL ELSE round(((h / 7) % 10000000) / 100.0, 2) END,
  CASE WHEN h % 10 < 7 THEN NULL ELSE round(((h / 11) % 5000) / 100.0, 2) END,
  CASE h % 4
    WHEN 0 THEN '{}'::text[]
    WHEN 1 THEN ARRAY[($3::text[])[1 + (h / 3) % 6]]
    ELSE ARRAY[($3::text[])[1 + (h / 3) % 6], ($3::text[])[1 + ((h / 3) % 6 + 1 + (h / 17) % 5) % 6]]
  END,
  '[]'::jsonb,
  CASE WHEN h % 3 = 0 THEN 'P' || (1 + h % 10) || 'Y' END,
  CASE WHEN h % 7 = 0 THEN to_char(created, 'YYYY-MM-DD') || 'T00:00:00Z/P1Y' END,
  CASE WHEN h % 6 = 0 THEN '0 9 * * MON-FRI' END,
  CASE WHEN h % 4 = 0 THEN NULL ELSE (created + interval '30 days')::date END,
  CASE WHEN h % 10 BETWEEN 3 AND 7 THEN created + interval '1 day' END,
  CASE WHEN h % 10 = 0 THEN NULL ELSE jsonb_build_object('source', jsonb_build_object(
    'system', ($4::text[])[1 + (h / 13) % 5],
    'region', CASE WHEN h % 3 = 1 THEN NULL ELSE ($5::text[])[1 + (h / 19) % 3] END)) END,
  CASE WHEN h % 2 = 0 THEN NULL ELSE md5('print' || i) END
FROM (
  SELECT i, hashint4(i) & 2147483647 AS h, timestamptz '2021-01-01 00:00:00Z' + i * interval '90 seconds' AS created
  FROM generate_series($6::integer, $7::integer) AS g(i)
) AS g`

const COLUMNS = `ctx, id, etag, "createdDateTime", "createdBy", "modifiedDateTime", "modifiedBy",
  name, description, "authorId", status, kind, "pageCount", "byteCount", amount, "discountPercentage",
  tags, pages, "retentionDuration", "validityInterval", "reviewSchedule", "effectiveDate", "publishedDateTime",
  metadata, fingerprint`

/**
 * Inserts `authors` authors and `count` documents under execution context `ctx` into the
 * (empty) tables the service made. Progress goes to `log` (stderr by default).
 * Returns { count, ms }.
 */
export async function seed ({ url, count = 1_000_000, batch = 100_000, authors = 3, ctx = 'prod', log = (line) => process.stderr.write(line + '\n') }) {
  const client = new pg.Client({ connectionString: url, options: '-c TimeZone=UTC' })
  await client.connect()
  const started = Date.now()
  try {
    // Nothing here needs to survive a crash; index builds get room to sort in memory.
    await client.query("SET synchronous_commit = off; SET maintenance_work_mem = '512MB'")
    const ids = authorIds(authors)
    await client.query(`INSERT INTO authors (ctx, id, etag, "createdDateTime", "createdBy", "modifiedDateTime", "modifiedBy", name, email, active)
      SELECT $1, id, '"seed-' || n || '"', now(), 'seed', now(), 'seed', 'Bench Author ' || n, 'author' || n || '@example.com', true
      FROM unnest($2::text[]) WITH ORDINALITY AS a(id, n)`, [ctx, ids])

    // Plain indexes (not those of the primary key, UNIQUE or other constraints), rebuilt after the load.
    const { rows: plain } = await client.query(`SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
      FROM pg_index i WHERE i.indrelid = 'documents'::regclass
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`)
    for (const ix of plain) await client.query(`DROP INDEX ${ix.name}`)

    for (let from = 1; from <= count; from += batch) {
      const to = Math.min(count, from + batch - 1)
      await client.query(`INSERT INTO documents (${COLUMNS}) ${SELECT}`, [ctx, ids, TAGS, SYSTEMS, REGIONS, from, to])
      log(`  seeded ${to.toLocaleString('en-US')} / ${count.toLocaleString('en-US')} documents (${((Date.now() - started) / 1000).toFixed(0)} s)`)
    }
    for (const ix of plain) {
      const t = Date.now()
      await client.query(ix.def)
      log(`  index ${ix.name} rebuilt (${((Date.now() - t) / 1000).toFixed(1)} s)`)
    }
    await client.query('VACUUM (ANALYZE) documents, authors')
    log(`  analyzed; seeding took ${((Date.now() - started) / 1000).toFixed(0)} s`)
    return { count, ms: Date.now() - started }
  } finally {
    await client.end()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.argv[2]
  if (url === undefined) {
    console.error('usage: node bench/seed.js <postgres url> [count]')
    process.exit(2)
  }
  await seed({ url, count: Number(process.argv[3] ?? 1_000_000) })
}
