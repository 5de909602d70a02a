// What the methods plugin uses of the problem plugin besides its public entry: not a package
// entry, so none of it is a promise to adopters.
export { methodNotAllowedProblem } from './unmatched.js'
