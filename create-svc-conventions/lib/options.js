// The initializer's command line, parsed into options, or into what is wrong with it.
import { parseArgs } from 'node:util'
import { FIELD_TYPES, STARTER } from './fields.js'

export const USAGE = 'usage: npm init svc-conventions <dir> [-- <options>]   (or: svc-conventions new <dir> [<options>])'

export const HELP = `${USAGE}

Writes a new HTTP JSON service built with the svc-conventions plugins into <dir>, installs
its dependencies, and says what to run next. npm init passes options after "--".

  --typescript            TypeScript, run by tsx (the default)
  --javascript            JavaScript
  --module esm|cjs        ES modules (the default) or CommonJS
  --resource <collection> [<field>...]
                          the first resource, its collection name (plural, lowercase) and
                          fields: <name>:<type>, <name>:<type>? for an optional one (null
                          when absent), <type> one of
                          ${Object.keys(FIELD_TYPES).join(', ')}
                          (default: ${STARTER.collection} ${STARTER.fields.join(' ')})
  --from <tarball|dir>    take svc-conventions from a packed tarball (npm pack) or a folder,
                          not from the npm registry
  --no-install            write the files only; run npm install yourself
  --force                 write into a directory that is not empty (files of the same name
                          are replaced)
  -h, --help              this text

Exit codes: 0 written, 1 the install failed, 2 refused (usage, name, directory, Node.js).`

/**
 * `{ dir, typescript, esm, collection, fields, install, from, force }`, `{ help: true }`, or
 * `{ error }`. Positionals that hold a colon are fields of --resource; the one left is <dir>.
 */
export function parseOptions (argv) {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        typescript: { type: 'boolean' },
        javascript: { type: 'boolean' },
        module: { type: 'string' },
        resource: { type: 'string' },
        from: { type: 'string' },
        'no-install': { type: 'boolean' },
        force: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' }
      },
      allowPositionals: true,
      strict: true
    })
  } catch (err) {
    return { error: err.message }
  }
  const { values, positionals } = parsed
  if (values.help === true) return { help: true }
  if (values.typescript === true && values.javascript === true) return { error: '--typescript or --javascript, not both' }
  const module = values.module ?? 'esm'
  if (module !== 'esm' && module !== 'cjs') return { error: `--module must be esm or cjs, got ${JSON.stringify(module)}` }
  // `--resource "books title:string"` works as well as `--resource books title:string`.
  const [collection, ...inline] = values.resource === undefined ? [] : values.resource.trim().split(/\s+/)
  const fields = [...inline, ...positionals.filter(p => p.includes(':'))]
  const dirs = positionals.filter(p => !p.includes(':'))
  if (collection === undefined && fields.length > 0) return { error: `fields (${fields.join(' ')}) without --resource <collection> before them` }
  if (dirs.length === 0) return { error: 'no directory: name the one to create (npm init svc-conventions my-service)' }
  if (dirs.length > 1) return { error: `one directory at a time, got ${dirs.map(d => JSON.stringify(d)).join(', ')}` }
  return {
    dir: dirs[0],
    typescript: values.javascript !== true,
    esm: module === 'esm',
    collection: collection ?? STARTER.collection,
    fields: collection === undefined ? STARTER.fields : fields,
    install: values['no-install'] !== true,
    from: values.from,
    force: values.force === true
  }
}
