// What the resource plugin's writer uses of the idempotency plugin besides its public entry: not
// a package entry, so none of it is a promise to adopters.
export { WRITE_RETRIES } from './claim.js'
