// What other plugins of the suite use of the problem plugin besides its public entry (the
// methods plugin its 405, openapi the rule of a problem status, conventions and webhooks the
// strict JSON parser, resource the violations of the parts a failed validation left unchecked):
// not a package entry, so none of it is a promise to adopters.
export { methodNotAllowedProblem } from './unmatched.js'
export { isErrorStatus } from './errors.js'
export { strictJsonParser } from './strict-json.js'
export { validationItems } from './later-parts.js'
