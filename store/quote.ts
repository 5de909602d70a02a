// PostgreSQL truncates identifiers to NAMEDATALEN - 1 = 63 bytes; two long names
// could then silently become one, so a longer name is refused instead.
const MAX_IDENTIFIER_BYTES = 63

/**
 * Quotes one SQL identifier (table, column, schema, constraint name) for
 * interpolation: wraps it in double quotes and doubles inner ones (PostgreSQL
 * 4.1.1). Values never go through here: they are `$n` parameters.
 * Throws a TypeError for an empty name, a NUL character, a lone surrogate or
 * more than 63 bytes.
 */
export function quoteIdent (name: string): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError(`quoteIdent: an identifier must be a non-empty string, got ${JSON.stringify(name)}`)
  }
  if (name.includes('\u0000')) {
    throw new TypeError(`quoteIdent: an identifier cannot contain a NUL character, got ${JSON.stringify(name)}`)
  }
  // A lone surrogate has no UTF-8 form: it would reach the server as U+FFFD, another name.
  if (/\p{Surrogate}/u.test(name)) {
    throw new TypeError(`quoteIdent: an identifier must be well-formed Unicode, got ${JSON.stringify(name)}`)
  }
  if (Buffer.byteLength(name, 'utf8') > MAX_IDENTIFIER_BYTES) {
    throw new TypeError(`quoteIdent: an identifier is at most ${MAX_IDENTIFIER_BYTES} bytes, got ${JSON.stringify(name)}`)
  }
  return '"' + name.replaceAll('"', '""') + '"'
}
