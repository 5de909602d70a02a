// `npm init svc-conventions <dir>` and `svc-conventions new <dir>`: checks, then writes a new
// service, installs its dependencies and says what to run next.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { nameProblems, occupants, unsupportedNode } from './lib/checks.js'
import { parseResource } from './lib/fields.js'
import { HELP, USAGE, parseOptions } from './lib/options.js'
import { projectFiles } from './templates/index.js'

/** The suite and its peers at the versions the suite was tested with (test/create checks them). */
export const VERSIONS = JSON.parse(readFileSync(new URL('./versions.json', import.meta.url), 'utf8'))

/** `npm install` in `cwd`, its output passed through; resolves to its exit code. */
function npmInstall (cwd) {
  return new Promise((resolve) => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    const child = spawn(npm, ['install', '--no-audit', '--no-fund'], { cwd, stdio: 'inherit', shell: process.platform === 'win32' })
    child.once('error', () => resolve(1))
    child.once('exit', code => resolve(code ?? 1))
  })
}

const defaultIo = {
  out: (line) => { process.stdout.write(`${line}\n`) },
  err: (line) => { process.stderr.write(`${line}\n`) },
  cwd: process.cwd(),
  nodeVersion: process.versions.node,
  install: npmInstall
}

/** The dependency on the suite: the registry's version, or a file: spec of a tarball or a folder. */
function suiteSpec (from, cwd) {
  if (from === undefined) return { spec: VERSIONS['svc-conventions'] }
  const path = resolve(cwd, from)
  if (!existsSync(path)) return { error: `--from ${from}: there is no such file or folder (${path})` }
  if (!/\.tgz$/.test(path) && !existsSync(join(path, 'package.json'))) return { error: `--from ${from}: neither a .tgz tarball (npm pack) nor a folder with a package.json` }
  return { spec: `file:${path}` }
}

/** Runs the initializer on `argv` (after the command's name) and resolves to the exit code. */
export async function create (argv, io = {}) {
  const { out, err, cwd, nodeVersion, install } = { ...defaultIo, ...io }
  const refuse = (message) => {
    err(`create-svc-conventions: ${message}`)
    return 2
  }
  const unsupported = unsupportedNode(nodeVersion)
  if (unsupported !== null) return refuse(unsupported)
  const options = parseOptions(argv)
  if ('help' in options) {
    out(HELP)
    return 0
  }
  if ('error' in options) {
    err(`create-svc-conventions: ${options.error}`)
    err(USAGE)
    return 2
  }
  const dir = resolve(cwd, options.dir)
  const name = basename(dir)
  const problems = nameProblems(name)
  if (problems.length > 0) {
    return refuse(`${JSON.stringify(name)} cannot be an npm package name: ${problems.join('; ')}. Choose a directory named in lowercase letters, digits and hyphens (my-service).`)
  }
  const present = occupants(dir)
  if (present.length > 0 && !options.force) {
    const shown = present.slice(0, 5).join(', ') + (present.length > 5 ? ', …' : '')
    return refuse(`${dir} is not empty (${shown}): choose a new directory, or add --force to write into it`)
  }
  const resource = parseResource(options.collection, options.fields)
  if ('error' in resource) return refuse(resource.error)
  const suite = suiteSpec(options.from, cwd)
  if ('error' in suite) return refuse(suite.error)

  const files = projectFiles({ name, typescript: options.typescript, esm: options.esm, suite: suite.spec, versions: VERSIONS, resource })
  for (const file of files) {
    const path = join(dir, file.path)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, file.content)
  }
  out(`Wrote a ${options.typescript ? 'TypeScript' : 'JavaScript'} service (${options.esm ? 'ES modules' : 'CommonJS'}) with /v1/${resource.collection} to ${dir}:`)
  for (const file of files) out(`  ${file.path}`)

  // A folder below the current one by its relative path, any other by its absolute one.
  const below = relative(cwd, dir)
  const where = below === '' ? undefined : below.startsWith('..') ? dir : below
  const cd = where === undefined ? [] : [`cd ${where.includes(' ') ? JSON.stringify(where) : where}`]
  if (options.install) {
    out('\nInstalling the dependencies (npm install)…')
    const code = await install(dir)
    if (code !== 0) {
      err(`create-svc-conventions: npm install failed (exit code ${code}); the files are written: fix the cause, then run npm install in ${dir}`)
      return 1
    }
  }
  out(['', 'Next:', ...[...cd, ...(options.install ? [] : ['npm install']), 'npm test', 'npm start'].map(line => `  ${line}`), '',
    `then, in another terminal: TOKEN=$(npm run -s token), and call http://127.0.0.1:3000/v1/${resource.collection}`,
    'with -H "authorization: Bearer $TOKEN" -H \'user-agent: me/1\' (README.md shows how, and how to add a resource).'].join('\n'))
  return 0
}
