import { example } from '../lib/fields.js'
import { exp, exportsLine, imp, withArticle } from '../lib/code.js'

/** README.md of the new service: run it, call it, configure it, and add a second resource. */
export default function readme (ctx) {
  const r = ctx.resource
  const ext = ctx.typescript ? 'ts' : 'js'
  const lang = ctx.typescript ? 'ts' : 'js'
  // The second resource of the example: authors, or editors when the first is authors already.
  const [two, one] = r.collection === 'authors' ? ['editors', 'editor'] : ['authors', 'author']
  return `# ${ctx.name}

An HTTP JSON service built with the [svc-conventions](https://www.npmjs.com/package/svc-conventions)
Fastify plugins: problem errors, header rules, bearer tokens, paged and filtered collections,
bulk operations and an OpenAPI document, the same way in every service.

    npm start          # http://127.0.0.1:3000, the API docs at /docs
    npm test           # ${ctx.typescript ? 'type-checks, then runs' : 'runs'} the tests in test/

Data lives in PostgreSQL embedded in \`./data\` (PGlite); set \`DATABASE_URL=postgres://…\` for a
server. Every \`/v1\` request needs a bearer token and a \`User-Agent\` of the form
\`<product>/<major-version>\`:

    TOKEN=$(npm run -s token)      # every scope of the service, signed with AUTH_JWT_SECRET
    curl -i http://127.0.0.1:3000/v1/${r.collection} -H "authorization: Bearer $TOKEN" -H 'user-agent: me/1' \\
      -H 'content-type: application/json' -d '${JSON.stringify(example(r))}'
    curl -i "http://127.0.0.1:3000/v1/${r.collection}?limit=10&ordering=-createdDateTime" -H "authorization: Bearer $TOKEN" -H 'user-agent: me/1'

| file | what |
| --- | --- |
| \`app.${ext}\` | the suite's plugins in the order a request travels, then the resources |
| \`resources/\` | one definition per resource; \`index.${ext}\` lists them and their scopes |
| \`config.${ext}\` | the environment, checked at start |
| \`server.${ext}\`, \`bin/token.${ext}\` | \`npm start\`, \`npm run token\` |
| \`test/\` | tests that call the service in process (\`app.inject\`) |

| variable | meaning | default |
| --- | --- | --- |
| \`HOST\` / \`PORT\` | where to listen | \`127.0.0.1\` / \`3000\` |
| \`DATA_DIR\` / \`DATABASE_URL\` | embedded PostgreSQL directory (or \`memory\`) / a PostgreSQL server | \`./data\` / unset |
| \`AUTH_JWT_SECRET\` | HS256 secret of the tokens, 32 bytes or more | a development secret; required in production |
| \`CURSOR_SECRET\` | keys of the paging cursors, comma-separated, each 16 bytes or more | a development secret; required in production |
| \`CORS_ORIGINS\`, \`RATE_LIMIT_MAX\`, \`TRUST_PROXY\`, \`LOG_LEVEL\` | allowed origins; requests per minute; proxies; pino level | none; 1000; unset; \`info\` |

With \`NODE_ENV=production\` the service refuses to start without its secrets, or with
\`DATA_DIR=memory\`.

## Add a second resource

Write its definition beside the first, in \`resources/${two}.${ext}\`:

\`\`\`${lang}
${imp(ctx, '@sinclair/typebox', { names: ['Type'] })}${imp(ctx, 'svc-conventions', { names: ['defineResource'] })}
${exp(ctx)}const ${two} = defineResource({
  name: '${one}',
  collection: '${two}',
  path: '/v1/${two}',
  idParam: '${one}Id',
  fields: {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.String({ format: 'email', maxLength: 254 })
  },
  unique: ['email'], // a second ${one} with this email is a 409
  scopes: { read: ['${two}:read'], write: ['${two}:write'] },
  filterable: ['name', 'email'],
  sortable: ['name']
})
${exportsLine(ctx, [two])}\`\`\`

List it, and its scopes, in \`resources/index.${ext}\`:

\`\`\`${lang}
${imp(ctx, `./${two}.js`, { names: [two] })}
${exp(ctx)}const resources = [${r.collection}, ${two}]
${exp(ctx)}const scopes = ['${r.collection}:read', '${r.collection}:write', '${two}:read', '${two}:write']
\`\`\`

Start again: the table is created, \`/v1/${two}\` answers, and \`/openapi.json\` documents it.
A field that names ${withArticle(one)} (\`${one}Id\` with \`references: [{ field: '${one}Id', resource: ${two} }]\`)
makes the database refuse ${withArticle(r.name)} of ${withArticle(one)} that does not exist. Every option of
\`defineResource\` (unique fields, references, actions, soft delete, indexes) is described in the
suite's \`docs/plugins/resource.md\`.
`
}
