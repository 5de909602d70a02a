#!/usr/bin/env node
// svc-conventions lint [--format text|json] <openapi.json>: lints an OpenAPI 3.x document
// against the conventions. Exit codes: 0 clean, 1 violations, 2 usage or input errors.
import { realpathSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { formatJson, formatReport, lintOpenApi } from '../index.js'

export interface LintIo {
  out: (line: string) => void
  err: (line: string) => void
  readFile: (path: string) => Promise<string>
}

const USAGE = 'usage: svc-conventions lint [--format text|json] <openapi.json>'
const FORMATS = { text: formatReport, json: formatJson }

/** `lint [--format text|json] <file>`, the option before or after the file; undefined when malformed. */
function parseArgs (argv: readonly string[]): { file: string, format: keyof typeof FORMATS } | undefined {
  const [command, ...rest] = argv
  if (command !== 'lint') return undefined
  let format: keyof typeof FORMATS = 'text'
  const files: string[] = []
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string
    const option = arg === '--format' ? rest[++i] : arg.startsWith('--format=') ? arg.slice('--format='.length) : undefined
    if (option === 'text' || option === 'json') format = option
    else if (arg.startsWith('--')) return undefined
    else files.push(arg)
  }
  const [file] = files
  return file === undefined || files.length > 1 ? undefined : { file, format }
}

const defaultIo: LintIo = {
  out: (line) => { process.stdout.write(`${line}\n`) },
  err: (line) => { process.stderr.write(`${line}\n`) },
  readFile: async (path) => await readFile(path, 'utf8')
}

/** Runs the command on `argv` (without node and the script) and resolves to the exit code. */
export async function lintCommand (argv: readonly string[], io: LintIo = defaultIo): Promise<number> {
  const args = parseArgs(argv)
  if (args === undefined) {
    io.err(USAGE)
    return 2
  }
  const { file, format } = args
  let document: unknown
  try {
    document = JSON.parse(await io.readFile(file))
  } catch (err) {
    io.err(`svc-lint: cannot read ${file} as JSON: ${(err as Error).message}`)
    return 2
  }
  const version = (document as { openapi?: unknown } | null)?.openapi
  if (typeof version !== 'string' || !version.startsWith('3.')) {
    io.err(`svc-lint: ${file} is not an OpenAPI 3.x document (no "openapi": "3.x" field)`)
    return 2
  }
  const violations = lintOpenApi(document)
  io.out(FORMATS[format](violations))
  return violations.length === 0 ? 0 : 1
}

// Through an npm bin symlink argv[1] is the link: compare real paths.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  // The package's one bin: `svc-conventions migrate …` is bin/migrate.ts's.
  process.exitCode = process.argv[2] === 'migrate'
    ? await (await import('./migrate.js')).migrateCommand(process.argv.slice(3))
    : await lintCommand(process.argv.slice(2))
}
