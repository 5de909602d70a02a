// Module hooks that run the TypeScript sources by erasing their types: amaro (Node's own type
// stripper) replaces each annotation with spaces, so every line and column of the code that runs
// is the one in the .ts file. Coverage then needs no source map, and no test process loads a
// compiler. Node 22.18+ does the same built in; this keeps Node 20 on the same path.
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { transformSync } from 'amaro'

const typescript = /\.[cm]?ts$/

export async function resolve (specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (err) {
    // NodeNext sources import './x.js' for a file written as './x.ts' (tap's mocks add a query).
    const js = /\.js(?=[?#]|$)/
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !/^\.{1,2}\/|^file:/.test(specifier) || !js.test(specifier)) throw err
    return nextResolve(specifier.replace(js, '.ts'), context)
  }
}

export async function load (url, context, nextLoad) {
  const path = url.startsWith('file:') ? new URL(url).pathname : ''
  if (!typescript.test(path)) return nextLoad(url, context)
  // The rest of the chain still loads the file: tap's coverage counts only the modules its own
  // hook saw.
  const format = path.endsWith('.cts') ? 'commonjs' : 'module'
  const loaded = await nextLoad(url, { ...context, format })
  const source = loaded.source ?? await readFile(fileURLToPath(url))
  const { code } = transformSync(String(source), { mode: 'strip-only', filename: fileURLToPath(url) })
  return { ...loaded, format, source: code }
}
