// `svc-conventions check <base-url> [options]`: the command over check(). Exit codes: 0 no rule
// fails, 1 one does, 2 the check could not run (the reason on standard error).
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { check } from './index.js'
import { formatJson } from './report/json.js'
import { formatJunit } from './report/junit.js'
import { formatTap } from './report/tap.js'
import { formatText } from './report/text.js'
import { RULES } from './rules/index.js'
import { CheckError, type CheckOptions, type CheckResult, type OutputFormat } from './types.js'

export interface CheckIo {
  out: (text: string) => void
  err: (line: string) => void
  readFile: (path: string) => Promise<string>
  env: Record<string, string | undefined>
}

/** The environment variable read for the token when neither --token nor --token-file is given. */
export const TOKEN_VARIABLE = 'SVC_CHECK_TOKEN'
/** The same for the limited token. */
export const LIMITED_TOKEN_VARIABLE = 'SVC_CHECK_LIMITED_TOKEN'

export const CHECK_USAGE = 'usage: svc-conventions check <base-url> [--token <token> | --token-file <file>] [--writes] [--format text|json|junit|tap] [options]'

export const CHECK_HELP = `${CHECK_USAGE}

Probes a running service over HTTP, rule by rule, against the HTTP JSON API conventions, and
reports each verdict (pass, fail with the exchange that shows it, not applicable, not checked).
Read-only unless --writes: it sends GET, HEAD, OPTIONS, and requests that must be refused before
any effect.

  --token <token>          bearer token for the probes that should pass (never printed)
  --token-file <file>      the token, read from a file
                           (else the environment variable ${TOKEN_VARIABLE})
  --limited-token <token>  a token the service accepts without a permission --token has,
                           for the 403 probe (never printed)
  --limited-token-file <file>  the limited token, read from a file
                           (else the environment variable ${LIMITED_TOKEN_VARIABLE})
  --origin <origin>        an origin the service allows, for the accepted CORS preflight
  --openapi <url|file>     the service's OpenAPI document (default <base-url>/openapi.json)
  --collection <path>      a collection to probe, a path beginning with / (repeatable)
  --writes                 create, change and delete entities of its own (removed at the end)
  --only <id>              only this rule (repeatable, or ids separated by commas)
  --skip <id>              not this rule (repeatable, or ids separated by commas)
  --max-requests <n>       at most n requests in all (default 500)
  --concurrency <n>        at most n requests at once (default 2)
  --ca <file>              a CA certificate (PEM) to trust besides Node.js's own
  --format text|json|junit|tap   the report (default text)
  --list                   the rules, with their ids and convention sections
  -h, --help               this text

Exit codes: 0 no rule fails, 1 a rule fails, 2 the check could not run.`

const FORMATS: Record<OutputFormat, (r: CheckResult) => string> = { text: formatText, json: formatJson, junit: formatJunit, tap: formatTap }

const defaultIo: CheckIo = {
  out: (text) => { process.stdout.write(`${text}\n`) },
  err: (line) => { process.stderr.write(`${line}\n`) },
  readFile: async (path) => await readFile(path, 'utf8'),
  env: process.env
}

const list = (values: string[] | undefined): string[] => (values ?? []).flatMap(v => v.split(',')).map(v => v.trim()).filter(v => v !== '')

function integer (name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new CheckError('usage', `--${name} must be a whole number of at least 1, got ${JSON.stringify(value)}`)
  return Number(value)
}

/** The rules, one line each: what --list prints. */
export function ruleList (): string {
  const width = Math.max(...RULES.map(r => r.id.length))
  return RULES.map(r => `${r.id.padEnd(width)}  ${r.section}: ${r.title}${r.unobservable === undefined ? '' : ` [not observable from outside: ${r.unobservable}]`}${r.writes === true ? ' [--writes]' : ''}`).join('\n')
}

async function optionsOf (argv: readonly string[], io: CheckIo): Promise<{ help: true } | { list: true } | { options: CheckOptions, format: OutputFormat }> {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        token: { type: 'string' },
        'token-file': { type: 'string' },
        'limited-token': { type: 'string' },
        'limited-token-file': { type: 'string' },
        origin: { type: 'string' },
        openapi: { type: 'string' },
        collection: { type: 'string', multiple: true },
        writes: { type: 'boolean' },
        only: { type: 'string', multiple: true },
        skip: { type: 'string', multiple: true },
        'max-requests': { type: 'string' },
        concurrency: { type: 'string' },
        ca: { type: 'string' },
        format: { type: 'string' },
        list: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' }
      },
      allowPositionals: true,
      strict: true
    })
  } catch (err) {
    throw new CheckError('usage', (err as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help === true) return { help: true }
  if (values.list === true) return { list: true }
  if (positionals.length !== 1) throw new CheckError('usage', positionals.length === 0 ? 'no base URL' : 'one base URL at a time')
  const format = values.format ?? 'text'
  if (!(format in FORMATS)) throw new CheckError('usage', `--format must be text, json, junit or tap, got ${JSON.stringify(format)}`)
  if (values.token !== undefined && values['token-file'] !== undefined) throw new CheckError('usage', '--token or --token-file, not both')
  if (values['limited-token'] !== undefined && values['limited-token-file'] !== undefined) throw new CheckError('usage', '--limited-token or --limited-token-file, not both')
  const readable = async (what: string, path: string): Promise<string> => {
    try { return await io.readFile(path) } catch (err) { throw new CheckError('usage', `cannot read the ${what} ${path}: ${(err as Error).message}`) }
  }
  const token = values.token ?? (values['token-file'] === undefined ? undefined : (await readable('token file', values['token-file'])).trim()) ?? io.env[TOKEN_VARIABLE]
  const limitedToken = values['limited-token'] ?? (values['limited-token-file'] === undefined ? undefined : (await readable('limited token file', values['limited-token-file'])).trim()) ?? io.env[LIMITED_TOKEN_VARIABLE]
  let openapi: CheckOptions['openapi']
  if (values.openapi !== undefined && !/^https?:\/\//i.test(values.openapi)) {
    const text = await readable('document', values.openapi)
    let parsed: unknown
    try {
      parsed = /^\s*\{/.test(text) ? JSON.parse(text) as unknown : (await import('yaml')).parse(text) as unknown
    } catch (err) {
      throw new CheckError('document', `cannot parse ${values.openapi}: ${(err as Error).message}`)
    }
    // A file is never taken for a URL, whatever it holds.
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || typeof (parsed as { openapi?: unknown }).openapi !== 'string') {
      throw new CheckError('document', `${values.openapi} is not an OpenAPI document (it has no "openapi" version field)`)
    }
    openapi = parsed as Record<string, unknown>
  } else {
    openapi = values.openapi
  }
  const options: CheckOptions = {
    baseUrl: positionals[0] as string,
    ...(token === undefined || token === '' ? {} : { token }),
    ...(limitedToken === undefined || limitedToken === '' ? {} : { limitedToken }),
    ...(values.origin === undefined ? {} : { origin: values.origin }),
    ...(openapi === undefined ? {} : { openapi }),
    collections: list(values.collection),
    writes: values.writes === true,
    only: list(values.only),
    skip: list(values.skip),
    ...(values['max-requests'] === undefined ? {} : { maxRequests: integer('max-requests', values['max-requests']) }),
    ...(values.concurrency === undefined ? {} : { concurrency: integer('concurrency', values.concurrency) }),
    ...(values.ca === undefined ? {} : { ca: await readable('CA file', values.ca) })
  }
  return { options, format: format as OutputFormat }
}

/** Runs the command on `argv` (after `check`) and resolves to the exit code. */
export async function checkCommand (argv: readonly string[], io: CheckIo = defaultIo): Promise<number> {
  try {
    const args = await optionsOf(argv, io)
    if ('help' in args) {
      io.out(CHECK_HELP)
      return 0
    }
    if ('list' in args) {
      io.out(ruleList())
      return 0
    }
    const result = await check(args.options)
    io.out(FORMATS[args.format](result))
    return result.verdicts.some(v => v.verdict === 'fail') ? 1 : 0
  } catch (err) {
    if (!(err instanceof CheckError)) throw err
    io.err(`svc-conventions check: ${err.message}`)
    if (err.kind === 'usage') io.err(CHECK_USAGE)
    return 2
  }
}
