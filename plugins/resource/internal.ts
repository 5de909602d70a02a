// What the suite's own parts (bulk, files, events) use of the resource
// plugin besides its public entry: not a package entry, so none of it is a promise to adopters.
export { SERVER_MANAGED } from './define.js'
export { Writer, newEtag } from './write/writer.js'
export { pastTense } from './write/runs.js'
export { Representation } from './representation.js'
export { storeProblem, upperSnake } from './problems.js'
export { mergePatch } from './merge-patch.js'
export { repeatedSubCollectionKeys } from './repeated-keys.js'
export { createBody, patchBody, compileBodyValidator, fillerOf } from './write-schemas.js'
