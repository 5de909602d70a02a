// Types of postgres.js for the TypeScript tests that import it.

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, trust authentication. */
  url: string
  port: number
  /** Stops the server and removes its data; safe to call twice. */
  stop: () => void
  /** Stops the server, keeping its data: `fast` ends sessions cleanly, `immediate` is a crash. */
  pause: (opts?: { mode?: 'smart' | 'fast' | 'immediate' }) => Promise<void>
  /** Starts a paused server again on the same port. */
  resume: () => Promise<void>
  /** Stops every server process where it stands (SIGSTOP): connections stay open, nothing answers. */
  freeze: () => void
  /** Lets a frozen server go on (SIGCONT). */
  thaw: () => void
}

export function havePostgres (): boolean
/** `hba`: pg_hba.conf lines that come before initdb's trust lines. */
export function startPostgres (opts?: { settings?: Record<string, string | number>, hba?: string[] }): Promise<PostgresServer>
