// Module customization hooks for the lazy-dependency test: every URL the loader resolves is
// appended to the file the test names, so that the child process reports what it loaded.
import { appendFileSync } from 'node:fs'

let file

export async function initialize (data) {
  file = data.file
}

export async function resolve (specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(file, `${resolved.url}\n`)
  return resolved
}
