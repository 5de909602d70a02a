// The package.json that npm pack ships, without the `prepare` script: that script builds a
// clone or a git install (it needs the sources and development dependencies, which the tarball
// does not carry), and in a tarball it would only make npm warn of an install script.
//
//   node scripts/pack-manifest.js strip [dir]    prepack: package.json without scripts.prepare,
//                                                the original kept beside it
//   node scripts/pack-manifest.js restore [dir]  postpack: the original back
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const [command, dir = process.cwd()] = process.argv.slice(2)
const manifest = join(dir, 'package.json')
const kept = join(dir, '.package.json.packing')

export function restore () {
  if (existsSync(kept)) renameSync(kept, manifest)
}

export function strip () {
  // A pack that failed before its postpack left the original aside: it is the one to strip.
  restore()
  const text = readFileSync(manifest, 'utf8')
  const pkg = JSON.parse(text)
  if (pkg.scripts?.prepare === undefined) return
  writeFileSync(kept, text)
  delete pkg.scripts.prepare
  writeFileSync(manifest, JSON.stringify(pkg, null, 2) + '\n')
}

if (command === 'strip') strip()
else if (command === 'restore') restore()
else {
  process.stderr.write('usage: node scripts/pack-manifest.js strip|restore [dir]\n')
  process.exit(2)
}
