// Moved to the problem plugin (plugins/problem/unavailable.ts, exported by its index.ts). Kept
// only until plugins/resource/ imports it from there: delete this file then, since
// plugins/shared/ must import nothing from a plugin folder.
export { unavailableProblem } from '../problem/index.js'
