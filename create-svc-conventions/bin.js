#!/usr/bin/env node
// `npm init svc-conventions <dir>` runs this file (npm's initializer convention: create-<name>).
import { unsupportedNode } from './lib/checks.js'

// Checked before index.js loads: its modules import what an older Node lacks (util.parseArgs),
// which would end it with a SyntaxError instead of this refusal.
const unsupported = unsupportedNode(process.versions.node)
if (unsupported === null) {
  const { create } = await import('./index.js')
  process.exitCode = await create(process.argv.slice(2))
} else {
  process.stderr.write(`create-svc-conventions: ${unsupported}\n`)
  process.exitCode = 2
}
