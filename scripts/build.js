// Builds the TypeScript sources into dist/ with tsc, once, so that `npm start` and
// `npm run token` run plain JavaScript and never compile at start.
//
//   node scripts/build.js               build (incremental: only what changed is compiled again)
//   node scripts/build.js --if-needed   build only when a source is newer than the last build
//                                       (npm start and npm run token: "builds if needed")
//   node scripts/build.js --clean       remove dist/ first (npm pack publishes a fresh build)
//   node scripts/build.js --template    build, then make PGlite's snapshot of an empty cluster
//                                       (npm ci / npm install), so that a first start skips initdb
//   node scripts/build.js --if-needed --run dist/server.js [args]
//                                       then run that file in this process with the arguments
//                                       after it (npm start, npm run token, npm run migrate): one
//                                       process, where a pre-script would start a second one
//
// tsc's own output goes to stderr: `TOKEN=$(npm run token)` must read the token alone.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const root = join(import.meta.dirname, '..')
const dist = join(root, 'dist')
const stamp = join(dist, '.build-stamp')
// Everything after `--run <file>` belongs to that file.
const argv = process.argv.slice(2)
const runAt = argv.indexOf('--run')
const args = new Set(runAt === -1 ? argv : argv.slice(0, runAt))
const run = runAt === -1 ? undefined : { file: argv[runAt + 1], rest: argv.slice(runAt + 2) }
if (run !== undefined && run.file === undefined) {
  process.stderr.write('build: --run needs the file to run\n')
  process.exit(2)
}
const say = (line) => { process.stderr.write(`build: ${line}\n`) }

/** The newest modification time of the sources tsconfig.build.json compiles, and of the configs. */
function newestSource () {
  let newest = 0
  const visit = (path) => {
    const s = statSync(path, { throwIfNoEntry: false })
    if (s === undefined) return
    if (s.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name))
    } else if (path.endsWith('.ts') || path.endsWith('.json')) {
      newest = Math.max(newest, s.mtimeMs)
    }
  }
  for (const dir of ['model', 'plugins', 'schemas', 'store', 'routes', 'bin', 'check']) visit(join(root, dir))
  for (const name of readdirSync(root)) if (name.endsWith('.ts') || /^tsconfig.*\.json$/.test(name)) visit(join(root, name))
  return newest
}

function upToDate () {
  const built = statSync(stamp, { throwIfNoEntry: false })
  return built !== undefined && built.mtimeMs >= newestSource()
}

function tscPath () {
  try {
    return createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc')
  } catch {
    return undefined
  }
}

function build () {
  const tsc = tscPath()
  if (tsc === undefined) {
    // Installed without development dependencies: a build there is not possible, and only
    // an error when nothing was ever built.
    if (existsSync(join(dist, 'server.js'))) {
      say('typescript is not installed; using the existing dist/')
      return true
    }
    say('typescript is not installed, and dist/ is empty: run npm ci (with development dependencies) to build')
    return false
  }
  const started = Date.now()
  const tscRun = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: ['ignore', 2, 2] })
  if (tscRun.status !== 0) {
    say('tsc failed (see above)')
    return false
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`)
  say(`dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return true
}

/** Opens an in-memory store once: its first start saves the snapshot (store/pglite-template.ts). */
async function makeTemplate () {
  try {
    const { templateFile } = await import(pathToFileURL(join(dist, 'store', 'pglite-template.js')).href)
    if (existsSync(templateFile())) return
    say('making the PGlite snapshot of an empty cluster, once per PGlite version')
    const { createStore } = await import(pathToFileURL(join(dist, 'store', 'index.js')).href)
    const store = createStore({ dataDir: 'memory' })
    await store.ready()
    await store.close()
  } catch (err) {
    say(`no PGlite snapshot made (${err.message}); the first start runs initdb instead`)
  }
}

/** Runs `file` as if node had been started with it: its `process.argv` names it, then its own arguments. */
async function runFile ({ file, rest }) {
  const path = resolve(file)
  process.argv = [process.argv[0], path, ...rest]
  await import(pathToFileURL(path).href)
}

// npm pack runs prepare after prepack, which has built dist/ afresh already: one build is enough.
if (args.has('--template') && ['pack', 'publish'].includes(process.env.npm_command ?? '')) process.exit(0)
if (args.has('--clean')) rmSync(dist, { recursive: true, force: true })
const needed = !args.has('--if-needed') || !upToDate()
if (needed && args.has('--if-needed')) say('sources changed since the last build: building dist/')
if (needed && !build()) process.exit(1)
if (needed && args.has('--template')) await makeTemplate()
if (run !== undefined) await runFile(run)
