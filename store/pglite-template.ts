import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MemoryFS, type PGlite } from '@electric-sql/pglite'
import { parseTar, type ParsedTarFileItem } from 'nanotar'

/*
 * A new PGlite cluster runs initdb inside WebAssembly, several seconds on a busy machine;
 * started from a snapshot of an empty cluster it takes a fraction of that. The snapshot is made
 * once per PGlite build and per user, and is only ever a cache: a missing, unreadable or
 * rejected one means a normal start, never an error. It is kept with the installed packages
 * (`node_modules/.cache/svc-conventions`, the usual place for a package's cache), so it goes
 * with them and never lingers in the temp folder.
 */

/** Where snapshots are kept by default: the `.cache` folder of the node_modules holding PGlite. */
function defaultDir (entry: string): string {
  let dir = dirname(entry)
  while (basename(dir) !== 'node_modules') {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('PGlite is not installed under a node_modules folder')
    dir = parent
  }
  return join(dir, '.cache', 'svc-conventions')
}

/** The snapshot's file: named after the installed PGlite build, so an upgrade never loads an old one. */
export function templateFile (dir?: string): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'))
  const pkg = join(dirname(entry), '..', 'package.json')
  const { version } = JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }
  const build = Math.floor(statSync(entry).mtimeMs).toString(36)
  const user = process.getuid?.() ?? 'user'
  return join(dir ?? defaultDir(entry), `svc-conventions-pglite-${version}-${build}-${user}.tar`)
}

/**
 * The cached snapshot, or undefined when there is none. A file that holds no cluster is deleted:
 * it is only a cache, and the next in-memory start makes it again.
 */
export function readTemplate (file: string): Snapshot | undefined {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch {
    return undefined
  }
  // nanotar reads the whole of a Uint8Array's buffer: a small file's Buffer shares a pool.
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes)
  let entries: ParsedTarFileItem[] = []
  try {
    entries = parseTar(whole)
  } catch {}
  if (entries.some((entry) => entry.name === VERSION_FILE && entry.type === 'file')) return new Snapshot(entries)
  dropTemplate(file)
  return undefined
}

/** The file whose presence makes a folder a cluster, to PostgreSQL and to PGlite. */
const VERSION_FILE = 'PG_VERSION'

/**
 * The files of an empty cluster, as read from the snapshot. Each file's bytes are a view into
 * the one buffer read from disk (nanotar's parse copies nothing), and a cluster started in
 * memory keeps those views as its files: a start copies none of the snapshot's tens of
 * megabytes. Hence one snapshot read starts one cluster.
 */
export class Snapshot {
  #entries: readonly ParsedTarFileItem[] | undefined

  constructor (entries: readonly ParsedTarFileItem[]) {
    this.#entries = entries
  }

  #take (): readonly ParsedTarFileItem[] {
    const entries = this.#entries
    if (entries === undefined) throw new Error('A snapshot read starts one cluster: read it again for another.')
    this.#entries = undefined
    return entries
  }

  /** PGlite's in-memory file system, holding the cluster when PGlite starts (its `fs` option). */
  memoryFs (): MemoryFS {
    return new SnapshotMemoryFs(this.#take())
  }

  /**
   * Writes the cluster into `dir`, an empty data directory. PG_VERSION goes last: a write cut
   * short leaves a folder PGlite never takes for a cluster.
   */
  writeTo (dir: string): void {
    let version: ParsedTarFileItem | undefined
    for (const entry of this.#take()) {
      const path = join(dir, entry.name)
      if (entry.type === 'directory') {
        mkdirSync(path, { recursive: true })
      } else if (entry.type === 'file') {
        if (entry.name === VERSION_FILE) {
          version = entry
          continue
        }
        mkdirSync(dirname(path), { recursive: true })
        writeFileSync(path, entry.data ?? EMPTY)
      }
    }
    writeFileSync(join(dir, VERSION_FILE), version?.data ?? EMPTY)
  }
}

const EMPTY = new Uint8Array(0)

/**
 * PGlite's in-memory file system, filled with the snapshot's files once PostgreSQL's module has
 * loaded and before PGlite looks for a cluster (its `initialSyncFs` step). Each file is handed
 * over (`canOwn`), so the file system keeps the snapshot's bytes rather than a copy of them.
 */
class SnapshotMemoryFs extends MemoryFS {
  #entries: readonly ParsedTarFileItem[] | undefined

  constructor (entries: readonly ParsedTarFileItem[]) {
    super()
    this.#entries = entries
  }

  override async initialSyncFs (): Promise<void> {
    const entries = this.#entries
    this.#entries = undefined
    const { FS, ENV } = (this.pg as PGlite).Module
    const root = ENV.PGDATA as string
    const made = new Set<string>()
    const mkdir = (path: string): void => {
      if (made.has(path)) return
      FS.mkdirTree(path)
      made.add(path)
    }
    mkdir(root)
    for (const entry of entries ?? []) {
      const path = `${root}/${entry.name}`
      if (entry.type === 'directory') {
        mkdir(path)
      } else if (entry.type === 'file') {
        mkdir(path.slice(0, path.lastIndexOf('/')))
        FS.writeFile(path, entry.data ?? EMPTY, { canOwn: true })
        const mtime = Number(entry.attrs?.mtime) * 1000
        if (Number.isFinite(mtime)) FS.utime(path, mtime, mtime)
      }
    }
  }
}

/** Saves a snapshot of `db`, which must be a fresh cluster nobody has written to. Best effort. */
export async function saveTemplate (db: PGlite, file: string): Promise<void> {
  // Written aside and renamed: processes starting at the same time never read half a file.
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  try {
    const dump = await db.dumpDataDir('none')
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()))
    renameSync(partial, file)
  } catch {
    try {
      rmSync(partial, { force: true })
    } catch {}
  }
}

/** Forgets a snapshot PGlite could not start from. */
export function dropTemplate (file: string): void {
  rmSync(file, { force: true })
}
