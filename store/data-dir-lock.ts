import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { DataDirInUse } from './errors.js'
import { makeDataDir } from './make-data-dir.js'

/*
 * PGlite is one PostgreSQL backend inside one process: two processes opening one data
 * directory each believe they are alone, and one overwrites what the other acknowledged.
 * A lock file in the directory, created exclusively, names the process that holds it. A lock
 * whose process is gone (killed, crashed, a zombie not yet reaped) is taken over, also when it
 * names this process's pid without this process holding it; one held by a living process, or
 * by a process on another host (which cannot be checked from here), refuses the second opener.
 */

/** The lock file's name, inside the data directory. */
export const LOCK_FILE = 'svc-conventions.lock'

export interface DataDirLock {
  readonly file: string
  /** Removes the lock file if it is still this process's. Safe to call more than once. */
  release: () => void
}

interface Holder { pid: number, host: string }

const host = hostname()

/**
 * The lock files this process holds, shared by every copy of this module it loaded. A lock
 * naming this process's pid that is not among them was left by an earlier process given the
 * same pid: a container's service is PID 1 again after a crash and restart.
 */
const HELD_KEY = Symbol.for('svc-conventions.data-dir-locks')
const heldHere: Set<string> = ((globalThis as Record<symbol, Set<string> | undefined>)[HELD_KEY] ??= new Set())

function parse (text: string): Holder | undefined {
  const [pid, holderHost] = text.split('\n')
  const n = Number(pid)
  return Number.isSafeInteger(n) && n > 0 && holderHost !== undefined && holderHost !== '' ? { pid: n, host: holderHost } : undefined
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  return !zombie(pid)
}

/**
 * Whether `pid` has exited and only waits for its parent to reap it (Linux: state Z in
 * /proc/<pid>/stat); signals still reach such a process. A killed holder stays one while its
 * parent (a container's PID 1 that reaps nothing, say) has not collected it. False where
 * there is no /proc.
 */
function zombie (pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    /* c8 ignore start: no /proc (not Linux), or the process was reaped between the signal and the read */
  } catch {
    return false
  }
  /* c8 ignore stop */
  // "pid (command) state …": the command may hold spaces and parentheses, the state follows the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
}

function read (file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/**
 * Takes the data directory `dir` (an absolute path, created if missing) for this process, or
 * throws `DataDirInUse` naming the directory and the process that holds it.
 */
export function lockDataDir (dir: string): DataDirLock {
  makeDataDir(dir)
  const file = join(dir, LOCK_FILE)
  const mine = `${process.pid}\n${host}\n`
  // Written whole under a name of its own, then linked as the lock, which fails if one exists: a
  // lock created empty and written after, as `wx` does, is read meanwhile by a process starting
  // at the same moment as one left unreadable by a crash, taken over, and both start.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  writeFileSync(draft, mine)
  try {
    return take(dir, file, draft, mine)
  } finally {
    unlinkSync(draft)
  }
}

function take (dir: string, file: string, draft: string, mine: string): DataDirLock {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      linkSync(draft, file)
      return held(file, mine)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const text = read(file)
    if (text === undefined) continue // released meanwhile: try again
    const holder = parse(text)
    if (holder !== undefined && (holder.host !== host || (holder.pid === process.pid ? heldHere.has(file) : alive(holder.pid)))) {
      throw new DataDirInUse({ dataDir: dir, pid: holder.pid, host: holder.host === host ? undefined : holder.host, lockFile: file })
    }
    // Stale (its process is gone, or had this pid before this process) or unreadable (not one this
    // module writes, or one an earlier version's crash left half written): taken over.
    takeOver(file, text)
  }
  /* c8 ignore next: only when other processes take and drop the lock ten times in a row */
  throw new DataDirInUse({ dataDir: dir, lockFile: file })
}

/**
 * Removes the stale lock `file` whose content was `stale`, atomically: the file is renamed
 * aside first, so of two processes taking over at once only one removes it, and a process
 * that renamed a fresh lock instead (written by a faster one meanwhile) puts it back.
 */
function takeOver (file: string, stale: string): void {
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  try {
    renameSync(file, aside)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  if (read(aside) !== stale) {
    try {
      linkSync(aside, file)
    } catch {}
  }
  unlinkSync(aside)
}

function held (file: string, mine: string): DataDirLock {
  let released = false
  heldHere.add(file)
  const release = (): void => {
    if (released) return
    released = true
    heldHere.delete(file)
    process.off('exit', release)
    if (read(file) === mine) unlinkSync(file)
  }
  // A process that exits without closing its store (process.exit) leaves no lock behind;
  // one that is killed does, and the next opener takes that one over.
  process.on('exit', release)
  return { file, release }
}
