import { builders, fieldSchema } from '../lib/fields.js'
import { exp, exportsLine, imp } from '../lib/code.js'

/** resources/<collection>.(ts|js): the first resource, one TypeBox definition. */
export function resource (ctx) {
  const r = ctx.resource
  const names = r.fields.map(f => f.name)
  return `${imp(ctx, '@sinclair/typebox', { names: ['Type'] })}${imp(ctx, 'svc-conventions', { names: [...builders(r), 'defineResource'] })}
// One definition gives the collection (GET paged and filtered, POST, POST …/search, PATCH for
// bulk operations), the item (GET, HEAD, PUT, PATCH as a merge patch, DELETE), its table, and
// its part of the OpenAPI document.
${exp(ctx)}const ${r.collection} = defineResource({
  name: '${r.name}', // its entities' ref: svc:${r.name}::<id>
  collection: '${r.collection}',
  path: '/v1/${r.collection}',
  idParam: '${r.idParam}',
  fields: {
${r.fields.map(f => `    ${f.name}: ${fieldSchema(f)}`).join(',\n')}
  },
  scopes: { read: ['${r.collection}:read'], write: ['${r.collection}:write'] },
  // Query parameters of the collection: ?${names[0]}=…, ?filter=<FIQL>, ?ordering=-createdDateTime.
  filterable: [${[...names, 'createdDateTime'].map(n => `'${n}'`).join(', ')}],
  sortable: [${[...names, 'createdDateTime'].map(n => `'${n}'`).join(', ')}]
})
${exportsLine(ctx, [r.collection])}`
}

/** resources/index.(ts|js): every resource the service serves, and every scope they ask for. */
export function resourceIndex (ctx) {
  const r = ctx.resource
  return `${imp(ctx, `./${r.collection}.js`, { names: [r.collection] })}
// A resource that another references comes before it.
${exp(ctx)}const resources = [${r.collection}]

// What \`npm run token\` grants when no --scope is given.
${exp(ctx)}const scopes = ['${r.collection}:read', '${r.collection}:write']
${exportsLine(ctx, ['resources', 'scopes'])}`
}
