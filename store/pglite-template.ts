import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PGlite } from '@electric-sql/pglite'

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

/** The cached snapshot, or undefined when there is none (or it cannot be read). */
export function readTemplate (file: string): Blob | undefined {
  try {
    return new SnapshotBlob(file, readFileSync(file))
  } catch {
    return undefined
  }
}

/**
 * A Blob over the snapshot read from its file, which PGlite reads once, with `arrayBuffer()`.
 * Node 20's own Blob copies the snapshot's tens of megabytes in, then out again through a
 * stream, a good part of a start's CPU. The first read that hands out memory is given the bytes
 * read from the file, uncopied; a later one reads the file again. So every read answers bytes of
 * its own, as a Blob's do, and a start copies the snapshot once fewer.
 */
class SnapshotBlob extends Blob {
  readonly #file: string
  readonly #size: number
  #bytes: Uint8Array | undefined

  constructor (file: string, bytes: Uint8Array) {
    super([])
    this.#file = file
    this.#size = bytes.byteLength
    this.#bytes = bytes
  }

  static {
    // Blob's `size` is an accessor of its prototype.
    Object.defineProperty(this.prototype, 'size', { get (this: SnapshotBlob) { return this.#size } })
  }

  /** The bytes, for a reader that never hands them out. */
  #peek (): Uint8Array {
    return this.#bytes ?? readFileSync(this.#file)
  }

  /** Bytes the caller may keep and change: those read at first, then the file read again. */
  #take (): Uint8Array {
    const bytes = this.#peek()
    this.#bytes = undefined
    return bytes
  }

  override async arrayBuffer (): Promise<ArrayBuffer> {
    const bytes = this.#take()
    // A small file's Buffer is a view into a pool shared with other Buffers: that one is copied.
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
    return whole ? bytes.buffer as ArrayBuffer : new Uint8Array(bytes).buffer
  }

  override async bytes (): Promise<Uint8Array> {
    return new Uint8Array(await this.arrayBuffer())
  }

  override async text (): Promise<string> {
    return new TextDecoder().decode(this.#peek())
  }

  override slice (start?: number, end?: number, type?: string): Blob {
    return new Blob([this.#peek()]).slice(start, end, type)
  }

  override stream (): ReturnType<Blob['stream']> {
    return new Blob([this.#peek()]).stream()
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
