import { mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'

/** What a failed creation means, by Node's error code, for an operator to fix. */
const REASONS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied (EACCES)',
  EPERM: 'operation not permitted (EPERM)',
  EROFS: 'the file system is read-only (EROFS)',
  ENOSPC: 'no space left on the device (ENOSPC)',
  EDQUOT: 'the disk quota is used up (EDQUOT)',
  ENOTDIR: 'a part of the path is a file, not a directory (ENOTDIR)',
  ENOENT: 'the file system does not allow a directory there (ENOENT)',
  EEXIST: 'something that is not a directory is there (EEXIST)'
}

function isDirectory (path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** The error: its message names the directory and why; its `code` is Node's, for callers that test it. */
function refusal (dir: string, at: string, err: NodeJS.ErrnoException | null): Error {
  const reason = err === null ? 'it is a file, not a directory' : REASONS[err.code ?? ''] ?? `${err.code ?? 'an error'}: ${err.message}`
  const message = `The data directory ${dir} cannot be created: ${reason}${at === dir ? '' : ` at ${at}`}.`
  return Object.assign(new Error(message, err === null ? undefined : { cause: err }), { code: err?.code ?? 'ENOTDIR' })
}

/**
 * Creates the data directory `dir` (absolute) and its missing parents, one level at a time, or
 * throws an error that names it and says why not. Not Node's recursive mkdir: where a parent
 * exists but its file system refuses the child with ENOENT (/proc, /sys), that retries for ever.
 */
export function makeDataDir (dir: string): void {
  const missing: string[] = []
  for (let at = dir; ; at = dirname(at)) {
    let found
    try {
      found = statSync(at, { throwIfNoEntry: false })
    } catch (err) {
      // Below a file: Node 20 and 22 throw ENOTDIR where later lines answer undefined. Either
      // way the walk goes on up, to name that file.
      if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') throw refusal(dir, at, err as NodeJS.ErrnoException)
    }
    if (found !== undefined) {
      if (found.isDirectory()) break
      throw refusal(dir, at, null)
    }
    missing.push(at)
    /* c8 ignore next: the root always exists */
    if (dirname(at) === at) break
  }
  for (const at of missing.reverse()) {
    try {
      mkdirSync(at)
    } catch (err) {
      // Made meanwhile by another process: as good as made here.
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && isDirectory(at)) continue
      throw refusal(dir, at, err as NodeJS.ErrnoException)
    }
  }
}
