// Module hooks that run the TypeScript sources by erasing their types: amaro (Node's own type
// stripper) replaces each annotation with spaces, so every line and column of the code that runs
// is the one in the .ts file. Coverage then needs no source map, and no test process loads a
// compiler. Node 22.18+ does the same built in; this keeps Node 20 on the same path.
//
// Both hooks serve either registration strip-types.js makes: in the process's own thread
// (module.registerHooks), where the next hook answers at once, or in a hooks thread
// (module.register), where it answers with a promise.
//
// Every test process loads much the same hundred-odd sources: each stripped text is kept in
// node_modules/.cache/strip-types under the digest of its source, and amaro is loaded only when
// one is missing.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const typescript = /\.[cm]?ts$/
const js = /\.js(?=[?#]|$)/
const relative = /^\.{1,2}\//
const cache = fileURLToPath(new URL('../node_modules/.cache/strip-types/', import.meta.url))
let amaro

export function resolve (specifier, context, nextResolve) {
  return nextResolve(typescriptTwin(specifier, context.parentURL), context)
}

/**
 * NodeNext sources import './x.js' for a file written as './x.ts' (tap's mocks add a query). From
 * a .ts file the .ts twin comes first; from any other, only when no .js file is there.
 */
function typescriptTwin (specifier, parent) {
  if (!js.test(specifier) || !(specifier.startsWith('file:') || (relative.test(specifier) && parent !== undefined))) return specifier
  const ts = specifier.replace(js, '.ts')
  const exists = (s) => existsSync(new URL(s.replace(/[?#].*$/, ''), parent))
  const fromTypeScript = parent !== undefined && typescript.test(new URL(parent).pathname)
  return (fromTypeScript || !exists(specifier)) && exists(ts) ? ts : specifier
}

/** The source with its types erased, from the cache when this exact text was stripped before. */
function strip (source, filename) {
  const digest = createHash('sha1').update(filename).update('\0').update(source).digest('hex')
  const file = `${cache}${digest}.js`
  try {
    return readFileSync(file, 'utf8')
  } catch {}
  amaro ??= createRequire(import.meta.url)('amaro')
  const { code } = amaro.transformSync(source, { mode: 'strip-only', filename })
  try {
    mkdirSync(cache, { recursive: true })
    // Written aside, then renamed: processes starting at once never read half a file.
    const aside = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
    writeFileSync(aside, code)
    renameSync(aside, file)
  } catch {}
  return code
}

export function load (url, context, nextLoad) {
  const path = url.startsWith('file:') ? new URL(url).pathname : ''
  if (!typescript.test(path)) return nextLoad(url, context)
  // The rest of the chain still loads the file: tap's coverage counts only the modules its own
  // hook saw.
  const format = path.endsWith('.cts') ? 'commonjs' : 'module'
  const erased = (loaded) => ({ ...loaded, format, source: strip(String(loaded.source ?? readFileSync(fileURLToPath(url))), fileURLToPath(url)) })
  const loaded = nextLoad(url, { ...context, format })
  return loaded instanceof Promise ? loaded.then(erased) : erased(loaded)
}
