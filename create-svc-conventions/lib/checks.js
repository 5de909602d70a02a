// What the initializer refuses before it writes anything: a Node.js it cannot serve, a name npm
// would refuse, a directory that already holds files.
import { builtinModules } from 'node:module'
import { existsSync, readdirSync, statSync } from 'node:fs'

/** The suite's `engines.node`: 20 from 20.19 (require of ES modules), 22 from 22.12, and later. */
export const SUPPORTED_NODE = '^20.19.0 || >=22.12.0'

/** Whether `version` ("20.19.0", "v22.12.1") is in SUPPORTED_NODE. */
export function nodeSupported (version) {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number)
  if (major === 20) return minor >= 19
  if (major === 22) return minor >= 12
  return major > 22
}

/** The refusal of a Node.js outside SUPPORTED_NODE, or null. */
export function unsupportedNode (version) {
  return nodeSupported(version) ? null : `Node.js ${version} is not supported: svc-conventions needs ${SUPPORTED_NODE} (nodejs.org, or nvm install 22)`
}

/**
 * Why npm would refuse `name` for a new package, or [] when it would not: the rules of
 * validate-npm-package-name (its errors and its warnings, which make a name invalid for new
 * packages), kept here so that the initializer runs with no dependency installed.
 */
export function nameProblems (name) {
  const problems = []
  if (name.length === 0) return ['it is empty']
  if (name.startsWith('.')) problems.push('it starts with a period')
  if (name.startsWith('-')) problems.push('it starts with a hyphen')
  if (name.startsWith('_')) problems.push('it starts with an underscore')
  if (name.trim() !== name) problems.push('it has leading or trailing spaces')
  if (['node_modules', 'favicon.ico'].includes(name.toLowerCase())) problems.push(`${name} is reserved`)
  if (builtinModules.includes(name.toLowerCase())) problems.push(`${name} is a Node.js core module`)
  if (name.length > 214) problems.push('it is longer than 214 characters')
  if (name.toLowerCase() !== name) problems.push('it has capital letters')
  if (/[~'!()*]/.test(name.split('/').slice(-1)[0])) problems.push('it has one of the characters ~\'!()*')
  if (encodeURIComponent(name) !== name) {
    // A scoped name, @scope/name, is URL-friendly in its two parts.
    const scoped = /^@([^/]+?)\/([^/]+?)$/.exec(name)
    if (scoped !== null && scoped[2].startsWith('.')) problems.push('its name after the scope starts with a period')
    if (scoped === null || encodeURIComponent(scoped[1]) !== scoped[1] || encodeURIComponent(scoped[2]) !== scoped[2]) {
      problems.push('it has characters that are not URL-friendly (spaces, slashes, …)')
    }
  }
  return problems
}

/** The entries of `dir` that make it "not empty": anything but a .git folder (a fresh clone). */
export function occupants (dir) {
  if (!existsSync(dir)) return []
  if (!statSync(dir).isDirectory()) return [dir]
  return readdirSync(dir).filter(name => name !== '.git')
}
