/**
 * The session settings a connection to a server starts with, and the connection string that
 * carries the rest. pg lets an `options` parameter of the URL (`?options=-c search_path=app`)
 * replace the `options` given beside it, which dropped the store's own settings (the statement
 * timeout, `TimeZone=UTC`) without a word. The URL's own come first here and the store's after:
 * PostgreSQL applies a start-up packet's settings in order, so where both set one, the store's
 * holds, and the URL's others (a search path, an application name) hold too.
 */
export function sessionOptions (databaseUrl: string, own: readonly string[]): { connectionString: string, options: string } {
  const query = databaseUrl.indexOf('?')
  if (query === -1) return { connectionString: databaseUrl, options: own.join(' ') }
  // Only the `options` parameters are taken out: the others stay exactly as written.
  const kept: string[] = []
  let theirs: string | null = null
  for (const part of databaseUrl.slice(query + 1).split('&')) {
    const [key] = new URLSearchParams(part).keys()
    if (key !== 'options') {
      kept.push(part)
      continue
    }
    // As pg reads the URL: the last one counts.
    theirs = new URLSearchParams(part).get('options')
  }
  if (theirs === null) return { connectionString: databaseUrl, options: own.join(' ') }
  const rest = kept.filter((part) => part !== '').join('&')
  return {
    connectionString: databaseUrl.slice(0, query) + (rest === '' ? '' : `?${rest}`),
    options: [theirs.trim(), ...own].filter((o) => o !== '').join(' ')
  }
}
