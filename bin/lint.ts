#!/usr/bin/env node
// The package's bin, `svc-conventions <command>`: `lint` here, `migrate` in bin/migrate.ts,
// `check` in check/cli.ts.
// svc-conventions lint [--format text|json] [<file> | <url> | -]: lints an OpenAPI 3.x document,
// JSON or YAML, against the conventions. Exit codes: 0 clean, 1 violations, 2 usage or input errors.
import { realpathSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { formatJson, formatReport, lintOpenApi } from 'svc-conventions/lint'

export interface LintIo {
  out: (line: string) => void
  err: (line: string) => void
  readFile: (path: string) => Promise<string>
  /** Standard input, read to its end. Default: the process's. */
  readStdin?: () => Promise<string>
  /** Whether standard input is a terminal (then nothing is piped in). Default: the process's. */
  stdinIsTty?: boolean
  /** The body and media type of an http(s) document. Default: fetch, 10 s at most. */
  fetchText?: (url: string) => Promise<{ text: string, contentType: string }>
}

export const VERSION = (createRequire(import.meta.url)('svc-conventions/package.json') as { version: string }).version

export const USAGE = 'usage: svc-conventions lint [--format text|json] [<file> | <url> | -]'

/** Every command of the bin, with its line in `svc-conventions --help`; `binCommand` runs each. */
export const COMMANDS = {
  lint: 'lints an OpenAPI 3.x document (a file, a URL or standard input) against the conventions',
  migrate: 'writes (new) and applies (up) versioned SQL migration files of your resource definitions',
  check: 'probes a running service over HTTP, rule by rule, against the conventions',
  new: 'writes a new service built with the suite into a directory (as npm init svc-conventions does)'
} as const

/** What `svc-conventions --help` prints: each command on one line. */
export const BIN_HELP = `usage: svc-conventions <command> [<options>]

Commands:
${Object.entries(COMMANDS).map(([name, line]) => `  ${name.padEnd(9)}${line}`).join('\n')}

  svc-conventions <command> --help   a command's options
  -h, --help                         this text
  -v, --version                      the version of svc-conventions`

export const HELP = `${USAGE}
       svc-conventions --help | --version

Lints an OpenAPI 3.x document, JSON or YAML, against the HTTP JSON API conventions the
svc-conventions plugins enforce. The document is read from a file, an http(s) URL, or
standard input ("-", or no argument with input piped in):

  svc-conventions lint openapi.yaml
  svc-conventions lint http://127.0.0.1:3000/openapi.json
  curl -s http://127.0.0.1:3000/openapi.json | svc-conventions lint --format json

  --format text|json   the report: text for people (default), json for tools
  -h, --help           this text
  -v, --version        the version of svc-conventions

Exit codes: 0 no violations, 1 violations, 2 a usage or input error.`

const FORMATS = { text: formatReport, json: formatJson }
type Format = keyof typeof FORMATS

type Parsed = { help: 'bin' | 'lint' } | { version: true } | { source: string | undefined, format: Format } | { error: string }

/** The command line, or what is wrong with it. */
function parse (argv: readonly string[]): Parsed {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        format: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' }
      },
      allowPositionals: true,
      strict: true
    })
  } catch (err) {
    return { error: (err as Error).message }
  }
  const { values, positionals } = parsed
  const [command, source, ...extra] = positionals
  if (values.help === true) return { help: command === 'lint' ? 'lint' : 'bin' }
  if (values.version === true) return { version: true }
  if (command !== 'lint') return { error: `${command === undefined ? 'no command' : `unknown command ${JSON.stringify(command)}`}: use ${Object.keys(COMMANDS).join(' or ')} (svc-conventions --help)` }
  if (extra.length > 0) return { error: 'one document at a time' }
  const format = values.format ?? 'text'
  if (format !== 'text' && format !== 'json') return { error: `--format must be text or json, got ${JSON.stringify(format)}` }
  return { source, format }
}

async function stdinText (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

async function fetchDocument (url: string): Promise<{ text: string, contentType: string }> {
  // The conventions' User-Agent form, so that a service following them answers.
  const res = await fetch(url, {
    headers: { 'user-agent': `svc-conventions-lint/${VERSION}`, accept: 'application/json, application/yaml;q=0.9, */*;q=0.1' },
    signal: AbortSignal.timeout(10_000)
  })
  if (!res.ok) throw new Error(`${url} answered ${res.status} ${res.statusText}`)
  return { text: await res.text(), contentType: res.headers.get('content-type') ?? '' }
}

const defaultIo: LintIo = {
  out: (line) => { process.stdout.write(`${line}\n`) },
  err: (line) => { process.stderr.write(`${line}\n`) },
  readFile: async (path) => await readFile(path, 'utf8')
}

/** JSON when it says so or looks so (a YAML parser's messages would puzzle a JSON author), else YAML. */
function isJson (text: string, name: string, contentType: string): boolean {
  return /\.json$/i.test(name) || /json/i.test(contentType) || /^\s*[{[]/.test(text)
}

/** Runs the command on `argv` (without node and the script) and resolves to the exit code. */
export async function lintCommand (argv: readonly string[], io: LintIo = defaultIo): Promise<number> {
  const args = parse(argv)
  if ('help' in args) {
    io.out(args.help === 'lint' ? HELP : BIN_HELP)
    return 0
  }
  if ('version' in args) {
    io.out(VERSION)
    return 0
  }
  if ('error' in args) {
    io.err(`svc-lint: ${args.error}`)
    io.err(USAGE)
    return 2
  }
  const stdin = args.source === '-' || (args.source === undefined && !(io.stdinIsTty ?? process.stdin.isTTY === true))
  if (args.source === undefined && !stdin) {
    io.err('svc-lint: no document: name a file or a URL, or pipe one in')
    io.err(USAGE)
    return 2
  }
  const name = stdin ? 'standard input' : args.source as string
  let text: string
  let contentType = ''
  try {
    if (stdin) {
      text = await (io.readStdin ?? stdinText)()
    } else if (/^https?:\/\//i.test(name)) {
      ({ text, contentType } = await (io.fetchText ?? fetchDocument)(name))
    } else {
      text = await io.readFile(name)
    }
  } catch (err) {
    io.err(`svc-lint: cannot read ${name}: ${(err as Error).message}`)
    return 2
  }
  const json = isJson(text, name, contentType)
  let document: unknown
  try {
    document = json ? JSON.parse(text) : (await import('yaml')).parse(text)
  } catch (err) {
    io.err(`svc-lint: cannot parse ${name} as ${json ? 'JSON' : 'YAML'}: ${(err as Error).message}`)
    return 2
  }
  const version = (document as { openapi?: unknown } | null)?.openapi
  if (typeof version !== 'string' || !version.startsWith('3.')) {
    io.err(`svc-lint: ${name} is not an OpenAPI 3.x document (no "openapi": "3.x" field)`)
    return 2
  }
  const violations = lintOpenApi(document)
  io.out(FORMATS[args.format](violations))
  return violations.length === 0 ? 0 : 1
}

/** The initializer's entry: create-svc-conventions/ ships inside the package, beside dist/. */
interface Initializer { create: (argv: string[], io: { out: (line: string) => void, err: (line: string) => void }) => Promise<number> }

/** `svc-conventions new <dir> [<options>]`: `npm init svc-conventions` run from an installed suite. */
async function newCommand (argv: readonly string[], io: LintIo): Promise<number> {
  const entry = new URL('./create-svc-conventions/index.js', import.meta.resolve('svc-conventions/package.json'))
  const { create } = await import(entry.href) as Initializer
  return await create([...argv], { out: io.out, err: io.err })
}

/** The package's one bin on `argv` (without node and the script): `migrate …` is bin/migrate.ts's, `check …` check/cli.ts's, the rest this file's. */
export async function binCommand (argv: readonly string[], io: LintIo = defaultIo): Promise<number> {
  if (argv[0] === 'check') return await (await import('../check/cli.js')).checkCommand(argv.slice(1), { out: io.out, err: io.err, readFile: io.readFile, env: process.env })
  if (argv[0] === 'new') return await newCommand(argv.slice(1), io)
  if (argv[0] === 'migrate') return await (await import('./migrate.js')).migrateCommand(argv.slice(1), { out: io.out, err: io.err, env: process.env, cwd: process.cwd() })
  return await lintCommand(argv, io)
}

// Through an npm bin symlink argv[1] is the link: compare real paths.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  process.exitCode = await binCommand(process.argv.slice(2))
}
