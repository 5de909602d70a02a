/** What the initializer writes and reports through; each has a default (the process's, npm install). */
export interface CreateIo {
  out?: (line: string) => void
  err?: (line: string) => void
  /** The directory <dir> is relative to. */
  cwd?: string
  /** The Node.js version checked against the supported range. */
  nodeVersion?: string
  /** Installs the dependencies in a directory; resolves to an exit code. */
  install?: (dir: string) => Promise<number>
}

/** The suite and its peers, by package name, at the versions the suite was tested with. */
export declare const VERSIONS: Readonly<Record<string, string>>

/** Runs the initializer on `argv` (after the command's name); resolves to the exit code: 0, 1 (install failed) or 2 (refused). */
export declare function create (argv: readonly string[], io?: CreateIo): Promise<number>
