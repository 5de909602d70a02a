import { userInfo } from 'node:os'
import { parse } from 'pg-connection-string'
import { ConnectionTimeout, isDatabaseError, Unavailable } from './errors.js'

/** The server a `postgres://` URL names, without its password: for messages and logs. */
export interface ServerTarget {
  host: string
  port: number
  database: string
  user: string
  /** Whether the URL asks for TLS (`sslmode` other than `disable`, or `ssl=true`). */
  tls: boolean
  /** Whether a password is given, in the URL or in PGPASSWORD (pg reads both); never the password itself. */
  password: boolean
}

function osUser (): string {
  try {
    return userInfo().username
  } catch {
    return 'postgres'
  }
}

/**
 * Reads a `postgres://` URL as pg does (with its own parser, pg-connection-string), with the
 * defaults libpq and pg apply (host `localhost`, port 5432, the user from PGUSER or the OS, the
 * database named after the user). The password is not kept.
 */
export function serverTarget (databaseUrl: string): ServerTarget {
  let url: ReturnType<typeof parse>
  try {
    url = parse(databaseUrl)
  } catch {
    return { host: 'localhost', port: 5432, database: '(unreadable URL)', user: '(unreadable URL)', tls: false, password: false }
  }
  const host = url.host === null || url.host === undefined || url.host === '' ? 'localhost' : url.host
  const port = url.port === null || url.port === undefined || url.port === '' ? 5432 : Number(url.port)
  const user = url.user === undefined || url.user === '' ? (process.env.PGUSER ?? osUser()) : url.user
  const database = url.database === null || url.database === undefined || url.database === '' ? user : url.database
  const sslmode = (url as { sslmode?: string }).sslmode
  const tls = sslmode !== undefined ? sslmode !== 'disable' : url.ssl !== undefined && url.ssl !== false
  const password = (url.password ?? '') !== '' || (process.env.PGPASSWORD ?? '') !== ''
  return { host, port, database, user, tls, password }
}

/** `database "app" on db.internal:5432 as user "svc"`: no password, ever. */
export function describeTarget (t: ServerTarget): string {
  return `database "${t.database}" on ${address(t)} as user "${t.user}"`
}

/** `host:port`, an IPv6 address in brackets. */
function address (t: ServerTarget): string {
  return `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`
}

// Node's TLS refusals of the server's certificate.
const CERTIFICATE_CODES = /^(?:CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(?:GET|VERIFY)_|ERR_TLS_CERT_ALTNAME_INVALID)/

/**
 * What to tell an operator when no connection to the server could be made: the cause (refused,
 * unknown host, unknown database, bad password, TLS, timeout…), the server it concerns, and
 * what to check. Built from error codes and SQLSTATEs; the password never appears, and the
 * driver's error stays as `cause` for the log.
 */
export function connectionFailure (err: unknown, target: ServerTarget, timeoutMs: number): Unavailable {
  const init = { cause: err, ...(isDatabaseError(err) ? { sqlState: err.code } : {}) }
  return timedOut(err) ? new ConnectionTimeout(explain(err, target, timeoutMs), init) : new Unavailable(explain(err, target, timeoutMs), init)
}

/** A connection that did not open in time: pg's own timeout (no code), or the network's. */
function timedOut (err: unknown): boolean {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown, message?: unknown }
  if (e.code === 'ETIMEDOUT') return true
  return !isDatabaseError(err) && e.code === undefined && typeof e.message === 'string' && /timeout/i.test(e.message)
}

function explain (err: unknown, t: ServerTarget, timeoutMs: number): string {
  const at = address(t)
  const server = `the PostgreSQL server at ${at}`
  const e = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown, message?: unknown }
  const code = typeof e.code === 'string' ? e.code : undefined
  const message = typeof e.message === 'string' ? e.message : ''
  if (isDatabaseError(err)) {
    switch (err.code) {
      case '3D000': return `The database "${t.database}" does not exist on ${server}: check the database name in DATABASE_URL, or create it.`
      case '28P01': return t.password
        ? `Authentication failed for user "${t.user}" on ${server}: check the user and password in DATABASE_URL.`
        : noPassword(t, server)
      case '28000': return t.tls
        ? `${capital(server)} does not accept user "${t.user}" for database "${t.database}" (no pg_hba.conf entry): check the user and database in DATABASE_URL, and the server's pg_hba.conf.`
        : `${capital(server)} does not accept user "${t.user}" for database "${t.database}" without TLS (no pg_hba.conf entry): if the server requires TLS, add ?sslmode=verify-full to DATABASE_URL (and sslrootcert=<file> for a private CA); else check the user, the database and the server's pg_hba.conf.`
      case '53300': return `${capital(server)} has no free connection slot (too many clients): lower the pool size or raise the server's max_connections.`
      case '57P03': return `${capital(server)} is starting up or shutting down: retry when it is ready.`
    }
    return `${capital(server)} refused the connection (SQLSTATE ${err.code}): check DATABASE_URL and the server's log.`
  }
  switch (code) {
    case 'ECONNREFUSED': return `Nothing accepts connections at ${at}: check that the PostgreSQL server is running, and the host and port in DATABASE_URL.`
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return `The host name "${t.host}" cannot be resolved: check the host in DATABASE_URL.`
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH': return `${capital(server)} cannot be reached over the network (${code}): check the host and port in DATABASE_URL, and any firewall between.`
    case 'ECONNRESET': return `${capital(server)} closed the connection while it was being opened: check that ${at} is a PostgreSQL server, and whether it requires TLS (add ?sslmode=verify-full to DATABASE_URL, and sslrootcert=<file> for a private CA).`
  }
  if (code !== undefined && CERTIFICATE_CODES.test(code)) {
    return `The TLS certificate of ${server} was not accepted (${code}): check the sslmode and sslrootcert in DATABASE_URL.`
  }
  // pg's own refusals carry no code: these are its fixed English texts, not the server's.
  // A server that asks for SCRAM-SHA-256 when there is no password: pg refuses before it answers.
  if (/client password must be a (non-empty )?string/i.test(message)) return noPassword(t, server)
  if (/does not support SSL/i.test(message)) return `${capital(server)} does not support TLS, which DATABASE_URL asks for: remove sslmode (or ssl) from DATABASE_URL, or enable TLS on the server.`
  if (/timeout/i.test(message)) return `No connection to ${server} within ${timeoutMs} ms: check that the server answers (a host that drops packets, a firewall, an overloaded server), or whether every connection of the pool was busy for that long.`
  if (/terminated unexpectedly|Connection terminated/i.test(message)) return `${capital(server)} closed the connection while it was being opened: check whether the server requires TLS (add ?sslmode=verify-full to DATABASE_URL, and sslrootcert=<file> for a private CA), and the server's log.`
  return `${capital(server)} cannot be reached${code === undefined ? '' : ` (${code})`}: check DATABASE_URL and that the server is running.`
}

/** An authentication failure for want of a password: the server asks for one, DATABASE_URL gives none. */
function noPassword (t: ServerTarget, server: string): string {
  return `Authentication failed for user "${t.user}" on ${server}: the server asks for a password and DATABASE_URL has none; add it to DATABASE_URL (postgres://user:password@host/database), or set PGPASSWORD.`
}

function capital (text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
