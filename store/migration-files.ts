import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { MigrationFailed } from './errors.js'
import { migrate, type MigrateOptions } from './migrate.js'
import type { Migration, Queryable, Store } from './types.js'

/*
 * Versioned SQL migration files: `NNNN_<name>.sql` in one directory, applied in the order of
 * their numbers, each once, in its own transaction, recorded in `schema_migrations` as
 * `file:<file name>` beside the migrations in code (store/migrate.ts).
 */

/** `0001_rename_title.sql`: a number, an underscore, a name of letters, digits, `_` and `-`. */
export const MIGRATION_FILE = /^(\d+)_([A-Za-z0-9][A-Za-z0-9_-]*)\.sql$/

export interface MigrationFile extends Migration {
  /** `file:<file name>`. */
  id: string
  /** The file's name, e.g. `0001_rename_title.sql`. */
  file: string
  path: string
  number: number
  /** The file's text. */
  text: string
}

export interface ReadOptions {
  /** Throw when the directory does not exist (it was asked for), rather than find no file. Default false. */
  required?: boolean
}

/** A file that holds only comments and blank lines: there is nothing to send. */
function blank (text: string): boolean {
  return text.split('\n').every(line => line.trim() === '' || line.trim().startsWith('--'))
}

/**
 * The migration files of `dir`, in order. Other files are ignored, but a `.sql` file whose name
 * does not follow the pattern, or two files with one number, are refused with a TypeError: each
 * is a mistake that would otherwise leave a migration out or run two in an order nobody chose.
 */
export function readMigrationFiles (dir: string, opts: ReadOptions = {}): MigrationFile[] {
  const root = resolve(dir)
  if (!existsSync(root)) {
    if (opts.required === true) throw new TypeError(`migrations: the directory ${root} does not exist`)
    return []
  }
  if (!statSync(root).isDirectory()) throw new TypeError(`migrations: ${root} is not a directory`)
  const files: MigrationFile[] = []
  for (const file of readdirSync(root).sort()) {
    if (!file.endsWith('.sql')) continue
    const m = MIGRATION_FILE.exec(file)
    if (m === null) throw new TypeError(`migrations: ${join(root, file)} must be named NNNN_<name>.sql (a number, an underscore, letters, digits, _ or -)`)
    const path = join(root, file)
    const text = readFileSync(path, 'utf8')
    files.push({ id: `file:${file}`, file, path, number: Number(m[1]), text, sql: blank(text) ? async () => {} : text })
  }
  files.sort((a, b) => a.number - b.number)
  for (let i = 1; i < files.length; i++) {
    const [a, b] = [files[i - 1] as MigrationFile, files[i] as MigrationFile]
    if (a.number === b.number) throw new TypeError(`migrations: ${a.file} and ${b.file} have the same number; renumber one`)
  }
  return files
}

/** The ids recorded in `schema_migrations`, none when the table does not exist yet. */
export async function appliedMigrations (db: Queryable): Promise<Set<string>> {
  const { rows: there } = await db.query<{ there: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS there")
  if (there[0]?.there !== true) return new Set()
  const { rows } = await db.query<{ id: string }>('SELECT id FROM schema_migrations')
  return new Set(rows.map(r => r.id))
}

/**
 * Applies the files not yet recorded, in order (store/migrate.ts: each in its own transaction
 * with its record, instances taking turns). A failed file is rolled back and stops the run with
 * a `MigrationFailed` that names it. Returns the ids applied.
 */
export async function applyMigrationFiles (store: Store, files: readonly MigrationFile[], opts: MigrateOptions = {}): Promise<string[]> {
  const applied: string[] = []
  for (const file of files) {
    try {
      applied.push(...await migrate(store, [file], opts))
    } catch (err) {
      throw new MigrationFailed(file.file, err)
    }
  }
  return applied
}

/** `Rename title` → `rename_title`: the name part of a new file. */
export function migrationSlug (name: string): string {
  const slug = name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '')
  if (slug === '') throw new TypeError(`migrations: a migration needs a name with letters or digits, got ${JSON.stringify(name)}`)
  return slug
}

/**
 * Writes the next file of `dir` (created if missing), numbered the highest number plus one, four
 * digits at least; `text` is given the file's name. Returns its path.
 */
export function writeMigrationFile (dir: string, name: string, text: (file: string) => string): string {
  const slug = migrationSlug(name)
  const files = readMigrationFiles(dir)
  const next = (files.at(-1)?.number ?? 0) + 1
  const file = `${String(next).padStart(4, '0')}_${slug}.sql`
  mkdirSync(resolve(dir), { recursive: true })
  const path = join(resolve(dir), file)
  // 'wx': never overwrite a file written meanwhile.
  writeFileSync(path, text(file), { flag: 'wx' })
  return path
}
