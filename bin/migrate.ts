// svc-conventions migrate new <name> --resources <module>… | up: versioned SQL migration files
// (docs/migrations.md). Exit codes: 0 done, 1 failed, 2 usage or input errors.
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath, pathToFileURL } from 'node:url'
import {
  createStore, type ResourceDefinition, type Store
} from '../index.js'
import { appliedMigrations, applyMigrationFiles, migrationText, previewTables, readMigrationFiles, writeMigrationFile, type MigrationFile, type SchemaComparison } from 'svc-conventions/store'
import { dependencyOrder } from 'svc-conventions/resource'

export interface MigrateIo {
  out: (line: string) => void
  err: (line: string) => void
  env: NodeJS.ProcessEnv
  /** Where relative paths start. */
  cwd: string
  /** Opens the database; default the service's (`openStore`). The command closes it. */
  store?: (io: MigrateIo) => Store
}

export const USAGE = `usage: svc-conventions migrate new <name> --resources <module> [--resources <module>…] [--dir <dir>]
       svc-conventions migrate up [--dir <dir>]

  new   writes the directory's next file, NNNN_<name>.sql, with the SQL that would bring the
        tables to the resource definitions the modules export, for you to review
  up    applies the files not applied yet, in order, each once

The database: DATABASE_URL (a PostgreSQL server), else DATA_DIR (embedded PGlite, default ./data).
The files: --dir, else MIGRATIONS_DIR, else ./migrations.`

const defaultIo: MigrateIo = {
  out: (line) => { process.stdout.write(`${line}\n`) },
  err: (line) => { process.stderr.write(`${line}\n`) },
  env: process.env,
  cwd: process.cwd()
}

/** The store the service would open: the same variables, the same defaults. */
export function openStore (io: MigrateIo): Store {
  const url = io.env.DATABASE_URL
  const dataDir = io.env.DATA_DIR === undefined || io.env.DATA_DIR === '' ? './data' : io.env.DATA_DIR
  // Resolved as a path, 'memory' would open a database in ./memory, one the service never reads.
  if ((url === undefined || url === '') && dataDir === 'memory') {
    throw new TypeError('DATA_DIR=memory: an in-memory database lasts as long as the process that opens it, so there is none to migrate; the service applies the migration files itself at each start')
  }
  return createStore(url === undefined || url === '' ? { dataDir: resolve(io.cwd, dataDir) } : { databaseUrl: url })
}

function isDefinition (value: unknown): value is ResourceDefinition {
  const v = value as Partial<ResourceDefinition> | null
  return typeof v === 'object' && v !== null && typeof v.collection === 'string' && typeof v.storage?.spec?.table === 'string'
}

type TsImport = (specifier: string, parent: string) => Promise<Record<string, unknown>>

/** tsx's `tsImport`, from the tsx the project in `cwd` has installed; null without one. */
async function projectTsx (cwd: string): Promise<TsImport | null> {
  let manifest: string
  try {
    manifest = createRequire(join(cwd, 'package.json')).resolve('tsx/package.json')
  } catch {
    return null
  }
  // The ES module entry of tsx/esm/api, as its package.json exports it.
  const entry = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, { import?: string | { default?: string } } | undefined> }).exports?.['./esm/api']?.import
  const file = typeof entry === 'string' ? entry : entry?.default
  if (file === undefined) return null
  const api = await import(pathToFileURL(join(dirname(manifest), file)).href) as { tsImport?: unknown }
  return typeof api.tsImport === 'function' ? api.tsImport as TsImport : null
}

const TYPESCRIPT = /\.[cm]?ts$/i
// Node's refusals of a TypeScript module it has no loader for (Node 20, 22 before type
// stripping), or that type stripping cannot take (syntax it does not strip, an import of
// `./x.js` that means `./x.ts`).
const TYPESCRIPT_REFUSALS = new Set(['ERR_UNKNOWN_FILE_EXTENSION', 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX', 'ERR_INVALID_TYPESCRIPT_SYNTAX', 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING', 'ERR_MODULE_NOT_FOUND'])

/**
 * A module of definitions: imported as it is, or, when it is TypeScript this Node.js does not
 * load, through the project's tsx; without tsx, an error saying how to run the command.
 */
async function importDefinitions (m: string, io: MigrateIo): Promise<Record<string, unknown>> {
  const path = resolve(io.cwd, m)
  const url = pathToFileURL(path).href
  try {
    return await import(url) as Record<string, unknown>
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code
    if (!TYPESCRIPT.test(path) || !existsSync(path) || typeof code !== 'string' || !TYPESCRIPT_REFUSALS.has(code)) throw err
    const tsImport = await projectTsx(io.cwd)
    if (tsImport === null) {
      throw new TypeError(`${m} is TypeScript, which Node.js ${process.version} does not load by itself (${code}), and the project has no tsx to load it with: ` +
        'install tsx (npm i -D tsx) and run the command again, which then loads the module through it; ' +
        'or run the command under tsx as it is, npx tsx node_modules/.bin/svc-conventions migrate … (node --import tsx node_modules/.bin/svc-conventions migrate … once tsx is installed); ' +
        'or name the compiled .js module instead.')
    }
    return await tsImport(url, import.meta.url)
  }
}

/** Every resource definition the modules export (arrays of them too), once each, referenced tables first. */
async function loadDefinitions (modules: readonly string[], io: MigrateIo): Promise<ResourceDefinition[]> {
  const found = new Map<string, ResourceDefinition>()
  for (const m of modules) {
    const exports = await importDefinitions(m, io)
    const defs = Object.values(exports).flatMap(v => Array.isArray(v) ? v : [v]).filter(isDefinition)
    if (defs.length === 0) throw new TypeError(`${m} exports no resource definition (defineResource)`)
    for (const d of defs) found.set(d.storage.table, d)
  }
  return dependencyOrder([...found.values()])
}

async function up (dir: string, io: MigrateIo): Promise<number> {
  const files = readMigrationFiles(resolve(io.cwd, dir))
  if (files.length === 0) {
    io.out(`No migration files in ${dir}.`)
    return 0
  }
  const store = (io.store ?? openStore)(io)
  try {
    const applied = await applyMigrationFiles(store, files)
    for (const id of applied) io.out(`Applied ${id.replace(/^file:/, '')}.`)
    if (applied.length === 0) io.out(`Nothing to apply: ${files.length === 1 ? 'the one file of' : `the ${files.length} files of`} ${dir} ${files.length === 1 ? 'was' : 'were'} applied before.`)
    return 0
  } finally {
    await store.close()
  }
}

async function create (name: string, modules: readonly string[], dir: string, io: MigrateIo): Promise<number> {
  const definitions = await loadDefinitions(modules, io)
  const root = resolve(io.cwd, dir)
  const files = readMigrationFiles(root)
  const store = (io.store ?? openStore)(io)
  let comparison: SchemaComparison
  let pending: MigrationFile[]
  try {
    const applied = await appliedMigrations(store)
    pending = files.filter(f => !applied.has(f.id))
    comparison = await previewTables(store, definitions.map(d => d.storage.spec), pending)
  } finally {
    await store.close()
  }
  const path = writeMigrationFile(root, name, (file) => migrationText(file, comparison.refusals))
  const near = relative(io.cwd, path)
  const shown = near.startsWith('..') ? path : near
  const n = comparison.refusals.length
  io.out(n === 0
    ? `Wrote ${shown}: the tables match the definitions, so it holds no statement yet; write yours.`
    : `Wrote ${shown} with the SQL of ${n} ${n === 1 ? 'difference' : 'differences'}: review it, then apply it with \`svc-conventions migrate up\` or the service's next start.`)
  if (pending.length > 0) io.out(`It follows the files not applied yet: ${pending.map(f => f.file).join(', ')}.`)
  for (const c of comparison.changes) io.out(`The next start also changes "${c.table}" by itself: ${c.change}.`)
  return 0
}

/** Runs `migrate` with `argv` (after the word `migrate`) and resolves to the exit code. */
export async function migrateCommand (argv: readonly string[], io: MigrateIo = defaultIo): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { dir: { type: 'string' }, resources: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true
    })
  } catch (err) {
    io.err(`svc-conventions migrate: ${(err as Error).message}`)
    io.err(USAGE)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    io.out(USAGE)
    return 0
  }
  const [action, ...rest] = positionals
  const dir = values.dir ?? (io.env.MIGRATIONS_DIR === undefined || io.env.MIGRATIONS_DIR === '' ? 'migrations' : io.env.MIGRATIONS_DIR)
  const modules = values.resources ?? []
  const usage = (problem: string): number => {
    io.err(`svc-conventions migrate: ${problem}`)
    io.err(USAGE)
    return 2
  }
  if (action === 'up') {
    if (rest.length > 0) return usage(`up takes no argument, got ${rest.join(' ')}`)
  } else if (action === 'new') {
    if (rest.length !== 1) return usage('new takes one name, e.g. migrate new rename_title')
    if (modules.length === 0) return usage('new needs --resources: the module(s) that export your resource definitions')
  } else {
    return usage(action === undefined ? 'say new or up' : `unknown command ${action}`)
  }
  try {
    return action === 'up' ? await up(dir, io) : await create(rest[0] as string, modules, dir, io)
  } catch (err) {
    io.err(`svc-conventions migrate: ${err instanceof Error ? err.message : String(err)}`)
    return err instanceof TypeError ? 2 : 1
  }
}

// Through an npm bin symlink argv[1] is the link: compare real paths.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  process.exitCode = await migrateCommand(process.argv.slice(2))
}
