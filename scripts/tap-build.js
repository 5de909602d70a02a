// tap builds its test runner with the plugins .taprc names, and rebuilds it when they change,
// but the run that rebuilds still starts every test process with the loaders of the runner it
// had: on a fresh install, tap's own TypeScript loader (ts-node) ahead of ours, compiling every
// file twice. Building first, when the installed runner still lists that loader, spares the run.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const runner = readFileSync(new URL('../node_modules/@tapjs/test/test-built/dist/esm/index.js', import.meta.url), 'utf8')
const loaders = /^export const importLoaders = \[([^\]]*)\]/m.exec(runner)?.[1] ?? ''
if (loaders.includes('@tapjs/typescript')) {
  execFileSync(process.execPath, [fileURLToPath(new URL('../node_modules/.bin/tap', import.meta.url)), 'build'], { stdio: 'inherit' })
}
