import t from 'tap'
import fc from 'fast-check'
import { Type, type TSchema } from '@sinclair/typebox'
import Fastify from 'fastify'
import { defineResource, type ResourceDefinition, type ResourceOptions } from '../../plugins/resource/define.js'
import { columnOf, tableDdl, tableMigration, unwrapNullable } from '../../store/table/index.js'
import { mergePatch } from '../../plugins/resource/merge-patch.js'
import { compileBodyValidator, createBody, fillerOf, patchBody, patchable, writeForm } from '../../plugins/resource/write-schemas.js'
import { storeProblem, upperSnake } from '../../plugins/resource/problems.js'
import resource, { dependencyOrder } from '../../plugins/resource/index.js'
import idempotency from '../../plugins/idempotency/index.js'
import { CheckViolation, ForeignKeyViolation, SerializationFailure, UniqueViolation, Unavailable } from '../../store/errors.js'
import { CronSchedule, DateOnly, DateTime, Decimal, Int32, Int64, Nullable, UpperSnakeEnum } from '../../schemas/types.js'
import { pglite } from '../support/databases.js'
import { prerequisites } from './helper.js'
import { authors } from '../../routes/v1/authors.js'
import { documents } from '../../routes/v1/documents.js'

const base: ResourceOptions<{ name: ReturnType<typeof Type.String> }> = {
  name: 'note',
  collection: 'notes',
  path: '/v1/notes',
  idParam: 'noteId',
  fields: { name: Type.String() }
}

t.test('defineResource refuses what cannot work, naming the option', async t => {
  const table: Array<[string, Record<string, unknown>, RegExp]> = [
    ['name', { name: 'Note' }, /^defineResource: name must be a lowercase entity name/],
    ['long name', { name: 'a'.repeat(21) }, /name must be/],
    ['collection', { collection: 'Notes' }, /collection must be/],
    ['table', { table: 'x-y' }, /table must be/],
    ['fillfactor under 10', { fillfactor: 5 }, /fillfactor must be an integer from 10 to 100 \(percent\)/],
    ['fillfactor over 100', { fillfactor: 101 }, /fillfactor must be an integer from 10 to 100/],
    ['fillfactor not an integer', { fillfactor: 50.5 }, /fillfactor must be an integer from 10 to 100/],
    ['fillfactor a string', { fillfactor: '50' }, /fillfactor must be an integer from 10 to 100/],
    ['path', { path: 'v1/notes' }, /path must be an absolute path/],
    ['idParam', { idParam: 'note_id' }, /idParam must be a camelCase/],
    ['fields', { fields: {} }, /fields must be an object of TypeBox schemas/],
    ['field name', { fields: { Name: Type.String() } }, /fields\.Name must be a camelCase property name/],
    ['server-managed field', { fields: { etag: Type.String() } }, /fields\.etag must be a field the server does not manage/],
    ['readOnly unknown', { readOnly: ['nope'] }, /readOnly must be one of the fields \(name\), got "nope"/],
    ['readOnly not a list', { readOnly: 'name' }, /readOnly must be an array of field names/],
    ['unique unknown', { unique: ['x'] }, /unique must be one of the fields/],
    ['summary unknown', { summary: { omit: ['x'] } }, /summary\.omit must be one of the fields/],
    ['reference field', { references: [{ field: 'x', resource: authors }] }, /references\.field must be one of the fields/],
    ['reference target', { references: [{ field: 'name', resource: {} }] }, /references \(name\)\.resource must be a ResourceDefinition/],
    ['reference ref name', { references: [{ field: 'name', resource: authors, ref: 'Bad' }] }, /references\.ref must be a camelCase/],
    ['optional without default', { fields: { name: Type.Optional(Type.String()) } }, /fields\.name must be given a default or made Nullable/],
    ['read-only without default', { fields: { name: Type.String(), hash: Type.String() }, readOnly: ['hash'] }, /fields\.hash must be given a default or made Nullable/],
    ['schema read-only without default', { fields: { name: Type.String({ readOnly: true }) } }, /fields\.name must be given a default/],
    ['derived clashing', { derived: { name: { schema: Type.String(), value: () => 'x' } } }, /derived\.name must be a name that is not already a field/],
    ['several types', { fields: { name: Type.Unsafe({ type: ['string', 'integer', 'null'] }) } }, /field name must have one JSON type/],
    ['unstorable type', { fields: { name: Type.Union([Type.String(), Type.Integer()]) } }, /field name must have one JSON type/],
    // A reference is filtered through its id; an index holds stored columns only.
    ['an index on a ref', { filterable: ['ref'], indexes: [['ref']] }, /indexes must name stored fields of the collection items/],
    ['a derived field filtered', { derived: { shout: { schema: Type.String(), value: () => 'x' } }, filterable: ['shout'] }, /queryable\(\) is false for "shout"/]
  ]
  for (const [name, change, message] of table) {
    t.throws(() => defineResource({ ...base, ...change } as never), { name: 'TypeError', message }, name)
  }
})

t.test('the references are filterable, with their prefix and column', async t => {
  const note = defineResource({ ...base, fields: { name: Type.String(), authorId: Type.String() }, references: [{ field: 'authorId', resource: authors, ref: 'authorRef' }, { field: 'name', resource: authors }], filterable: ['ref', 'authorRef', 'etag'] } as never)
  t.strictSame([...note.storage.fields.values()].filter(f => f.filterable).map(f => [f.path, f.type]), [['ref', 'string'], ['authorRef', 'string'], ['etag', 'string']])
  t.strictSame(note.storage.spec.refs, [{ field: 'ref', prefix: 'svc:note::', of: 'id' }, { field: 'authorRef', prefix: 'svc:author::', of: 'authorId' }], 'a reference without a ref field has none')
})

t.test('a definition: entity schema, read-only set, parent reference, derived refs', async t => {
  const child = defineResource({
    ...base,
    fields: { name: Type.String(), authorId: Nullable(Type.String()), hash: Nullable(Type.String()) },
    readOnly: ['hash'],
    parent: { resource: authors, field: 'authorId' },
    references: [],
    derived: { shout: { schema: Type.String(), value: (e) => String(e.name).toUpperCase() } }
  })
  t.strictSame(child.references.map(r => r.field), ['authorId'], 'the parent field becomes a reference')
  t.strictSame(child.api.writable, ['name', 'authorId'])
  t.ok(child.api.readOnly.has('hash') && child.api.readOnly.has('shout') && child.api.readOnly.has('etag'))
  t.strictSame((child.api.entity as unknown as { required: string[] }).required, ['id', 'ref', 'name', 'authorId', 'hash', 'shout', 'createdDateTime', 'createdBy', 'modifiedDateTime', 'modifiedBy', 'etag'])
  t.equal(child.ref('1'), 'svc:note::1')
  t.equal(child.itemPath('a b'), '/v1/notes/a%20b')
  t.strictSame(child.api.scopes, { read: [], write: [] })
  const nullableRef = defineResource({ ...base, fields: { name: Type.String(), authorId: Nullable(Type.String()) }, references: [{ field: 'authorId', resource: authors, ref: 'authorRef' }] })
  t.strictSame(nullableRef.api.derived.authorRef?.value({ authorId: null }), null)
  t.strictSame(nullableRef.api.derived.authorRef?.value({ authorId: 'a' }), 'svc:author::a')
  t.strictSame((nullableRef.api.entity as unknown as { properties: Record<string, { type: unknown }> }).properties.authorRef?.type, ['string', 'null'])
  t.strictSame(documents.storage.spec.summaryOmit, ['pages'])
  t.notOk('pages' in (documents.api.summary as unknown as { properties: object }).properties)
})

t.test('columns: one storage type per kind of the convention', async t => {
  const table: Array<[TSchema, string, string, boolean]> = [
    [Type.String(), 'string', 'text', false],
    [Nullable(Type.String()), 'string', 'text', true],
    [UpperSnakeEnum(['A', 'B']), 'enum', 'text', false],
    [Nullable(UpperSnakeEnum(['A'])), 'enum', 'text', true],
    [DateTime(), 'date-time', 'timestamptz(3)', false],
    [DateOnly(), 'date', 'date', false],
    [Decimal(), 'decimal', 'numeric', false],
    [Int64(), 'int64', 'bigint', false],
    [Int32({ minimum: 0, maximum: 9 }), 'int32', 'integer', false],
    [Type.Number(), 'number', 'double precision', false],
    [Type.Boolean(), 'boolean', 'boolean', false],
    [Type.Array(Type.String()), 'string-array', 'text[]', false],
    [Type.Array(UpperSnakeEnum(['A'])), 'json', 'jsonb', false],
    [Type.Array(DateOnly()), 'json', 'jsonb', false],
    [Type.Array(Type.Integer()), 'json', 'jsonb', false],
    [Type.Array(Type.Object({ a: Type.String() })), 'json', 'jsonb', false],
    [Nullable(Type.Object({ a: Type.String() })), 'json', 'jsonb', true],
    [Type.Union([Type.Object({ a: Type.String() }), Type.Null()]), 'json', 'jsonb', true],
    [CronSchedule(), 'string', 'text', false],
    [Type.Unsafe({ type: 'array' }), 'json', 'jsonb', false]
  ]
  for (const [schema, kind, sqlType, nullable] of table) {
    const c = columnOf('f', schema)
    t.match(c, { kind, sqlType, nullable }, `${kind} ${JSON.stringify(schema)}`)
  }
  t.strictSame(columnOf('e', Nullable(UpperSnakeEnum(['A', 'B']))).enumValues, ['A', 'B'], 'null is not a value of the CHECK')
  t.strictSame(unwrapNullable(Type.Union([Type.String(), Type.Integer(), Type.Null()])).nullable, false, 'a union of three is not one nullable type')
})

t.test('DDL: deterministic constraint names, ctx in every key, idempotent statements', async t => {
  const ddl = tableDdl({ table: 'documents', columns: documents.storage.spec.columns, unique: ['name'], references: [{ field: 'authorId', table: 'authors' }] })
  t.match(ddl, 'CONSTRAINT "documents_pkey" PRIMARY KEY (ctx, id)')
  t.match(ddl, 'CONSTRAINT "documents_name_key" UNIQUE (ctx, "name")')
  t.match(ddl, 'CONSTRAINT "documents_authorId_fkey" FOREIGN KEY (ctx, "authorId") REFERENCES "authors" (ctx, id)')
  t.match(ddl, 'CONSTRAINT "documents_status_check" CHECK ("status" IN (\'DRAFT\', \'PUBLISHED\', \'ARCHIVED\'))')
  t.match(ddl, '"publishedDateTime" timestamptz(3)')
  t.match(ddl, '"name" text NOT NULL')
  t.match(ddl, 'CREATE INDEX IF NOT EXISTS "documents_authorId_idx"')
  t.notMatch(ddl, 'ADD COLUMN', 'a table that exists is compared with its definition instead (store/evolve.ts)')
  const enumQuote = tableDdl({ table: 't', columns: [{ ...columnOf('e', UpperSnakeEnum(['A'])), enumValues: ["O'K"] }], unique: [], references: [] })
  t.match(enumQuote, "IN ('O''K')", 'a literal of the definition is quoted')
  t.match(tableDdl({ table: 'x', columns: [], unique: [], references: [], fillfactor: 70 }), /\n\) WITH \(fillfactor = 70\);/, 'a fillfactor named by the definition')
  t.match(tableDdl({ table: 'x', columns: [], unique: [], references: [] }, 50), /\n\) WITH \(fillfactor = 50\);/, 'or the store\'s')
  t.notMatch(ddl, 'WITH (', 'none: PostgreSQL\'s own')
  t.equal(tableMigration({ table: 'x', columns: [], unique: [], references: [] }).id, tableMigration({ table: 'x', columns: [], unique: [], references: [] }).id)
  t.not(documents.storage.migration.id, authors.storage.migration.id)
  t.match(documents.storage.migration.id, /^resource:documents:[0-9a-f]{12}$/)
})

t.test('write schemas: required unless omittable; nested members too; PATCH all optional, nullable where omittable', async t => {
  const fields = {
    name: Type.String(),
    count: Type.Integer({ default: 0 }),
    note: Nullable(Type.String()),
    meta: Nullable(Type.Object({ a: Type.String(), b: Nullable(Type.String()), c: Type.Integer({ default: 1 }) })),
    list: Type.Array(Type.Object({ x: Type.String(), y: Nullable(Type.String()) }), { default: [] })
  }
  const post = createBody(fields, Object.keys(fields)) as unknown as Record<string, any>
  t.strictSame(post.required, ['name'])
  t.equal(post.additionalProperties, false)
  t.strictSame(post.properties.meta.required, ['a'])
  t.equal(post.properties.meta.additionalProperties, false)
  t.strictSame(post.properties.list.items.required, ['x'])
  const patch = patchBody(fields, Object.keys(fields)) as unknown as Record<string, any>
  t.strictSame(patch.required, [])
  t.strictSame(patch.properties.name.type, 'string', 'null would remove a required field: not offered')
  t.strictSame(patch.properties.count.type, ['integer', 'null'], 'null resets a field with a default')
  t.notOk('default' in patch.properties.count, 'an omitted member means unchanged: no default')
  t.strictSame(patch.properties.note.type, ['string', 'null'])
  t.strictSame(patch.properties.meta.type, ['object', 'null'])
  t.notOk('required' in patch.properties.meta)
  t.strictSame(patch.properties.meta.properties.a.type, 'string', 'a required nested member is not nullable either')
  t.strictSame(patch.properties.meta.properties.b.type, ['string', 'null'])
  t.strictSame(patch.properties.meta.properties.c.type, ['integer', 'null'])
  t.strictSame(patch.properties.list.type, ['array', 'null'])
  t.strictSame(patch.properties.list.items.required, ['x'], 'an array is replaced whole: its items are complete')
  t.strictSame(patchable(UpperSnakeEnum(['A'], { default: 'A' })), { type: ['string', 'null'], enum: ['A', null] })
  t.strictSame(patchable(UpperSnakeEnum(['A'])), { type: 'string', enum: ['A'] })
  t.strictSame(patchable(Type.Union([Type.String(), Type.Integer()], { default: 'x' })), { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'integer' }] }, { type: 'null' }] })
  t.strictSame(writeForm(Type.Array(Type.Array(Type.String()))), { type: 'array', items: { type: 'array', items: { type: 'string' } } })

  const fill = fillerOf(fields)
  const filled = fill({ name: 'n', meta: { a: 'x' }, list: [{ x: '1' }] })
  t.strictSame(filled, { name: 'n', count: 0, note: null, meta: { a: 'x', b: null, c: 1 }, list: [{ x: '1', y: null }] })
  const a = fill({ name: 'a' })
  const b = fill({ name: 'b' })
  t.not(a.list, b.list, 'defaults are copied, never shared')
  const given = { name: 'g', extra: 1 }
  t.strictSame(fill(given), { name: 'g', count: 0, note: null, meta: null, list: [], extra: 1 }, 'a value the schema does not name is kept')
  t.strictSame(given, { name: 'g', extra: 1 }, 'the value filled is left as it was')
  t.strictSame(fill({ name: 'n', meta: null, list: 'x' as never }), { name: 'n', count: 0, note: null, meta: null, list: 'x' })
  t.strictSame(fillerOf({ o: Type.Object({ v: Nullable(Type.String()) }) })({ o: [1] as never }), { o: [1] }, 'a wrong shape is left for validation')
  // Each kind of default, a fresh copy each time.
  const defaults = fillerOf({
    empty: Type.Object({}, { default: {} }),
    full: Type.Object({ k: Type.Array(Type.Integer()) }, { default: { k: [1] } }),
    items: Type.Array(Type.Integer(), { default: [1, 2] })
  })
  const d1 = defaults({})
  const d2 = defaults({})
  t.strictSame(d1, { empty: {}, full: { k: [1] }, items: [1, 2] })
  t.ok(d1.empty !== d2.empty && d1.full !== d2.full && (d1.full as { k: unknown }).k !== (d2.full as { k: unknown }).k && d1.items !== d2.items, 'never shared')

  const validate = compileBodyValidator(createBody(fields, Object.keys(fields)))
  t.equal(validate({ name: 'n' }), true)
  t.equal(validate({ name: 1, extra: true }), false)
  t.equal(validate.errors?.length, 2)
})

t.test('JSON Merge Patch: the examples of RFC 7396 Appendix A', async t => {
  const table: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }]
  ]
  for (const [target, patch, result] of table) {
    const before = JSON.stringify(target)
    t.strictSame(mergePatch(target, patch), result, `${before} + ${JSON.stringify(patch)}`)
    t.equal(JSON.stringify(target), before, 'the target is not changed')
  }
})

t.test('JSON Merge Patch: properties', async t => {
  const json = fc.jsonValue({ maxDepth: 3 })
  fc.assert(fc.property(json, json, (target, patch) => {
    const once = mergePatch(target, patch)
    // Applying the same patch again changes nothing (RFC 7396 patches are idempotent).
    t.strictSame(mergePatch(once, patch), once)
  }), { numRuns: 200 })
  fc.assert(fc.property(fc.dictionary(fc.string(), json, { noNullPrototype: true }), (target) => {
    t.strictSame(mergePatch(target, {}), target, 'an empty patch is the identity on objects')
  }), { numRuns: 100 })
  t.equal(upperSnake('authorId'), 'AUTHOR_ID')
  t.equal(upperSnake('name'), 'NAME')
})

t.test('store errors become problems without SQL', async t => {
  const registry = new Map<string, ResourceDefinition>([['authors', authors], ['documents', documents]])
  const cases: Array<[string, unknown, 'write' | 'delete' | 'transition', Record<string, unknown>]> = [
    ['unique name', new UniqueViolation({ constraint: 'documents_name_key', table: 'documents' }), 'write', { status: 409, detail: "A document named 'x' already exists; choose another name.", context: [{ code: 'UNIQUE_NAME_VIOLATION', value: 'x', source: 'body' }] }],
    // A transition (restore) sends no body: the stored name is not the client's to choose here.
    ['unique name on a transition', new UniqueViolation({ constraint: 'documents_name_key', table: 'documents' }), 'transition', { status: 409, detail: "Another document named 'x' exists; change or delete that one first, then retry.", context: [{ code: 'UNIQUE_NAME_VIOLATION', field: 'name', value: 'x', source: undefined }] }],
    ['missing reference on a transition', new ForeignKeyViolation({ constraint: 'documents_authorId_fkey', table: 'documents' }), 'transition', { status: 409, context: [{ code: 'REFERENCE_NOT_FOUND', field: 'authorId', source: undefined }] }],
    ['primary key', new UniqueViolation({ constraint: 'documents_pkey', table: 'documents' }), 'write', { status: 409, detail: /with this id already exists/ }],
    ['missing reference', new ForeignKeyViolation({ constraint: 'documents_authorId_fkey', table: 'documents' }), 'write', { status: 409, context: [{ code: 'REFERENCE_NOT_FOUND', field: 'authorId', source: 'body' }] }],
    ['still referenced, table unknown to the driver', new ForeignKeyViolation({ constraint: 'x_fkey' }), 'delete', { status: 409, detail: /while other resources refer to it/ }],
    ['an unknown reference', new ForeignKeyViolation({ constraint: 'documents_other_fkey', table: 'documents' }), 'write', { status: 409, detail: /refers to something that does not exist/ }],
    ['still referenced by an unknown table', new ForeignKeyViolation({ constraint: 'x_fkey', table: 'x' }), 'delete', { status: 409, detail: /while other resources refer to it/ }],
    ['serialization', new SerializationFailure({ sqlState: '40001' }), 'write', { status: 409, detail: /concurrent request; retry/ }],
    ['unavailable', new Unavailable(), 'write', { status: 503, headers: { 'retry-after': 1 } }],
    ['check', new CheckViolation({ constraint: 'documents_status_check' }), 'write', { status: 500 }]
  ]
  for (const [name, err, op, expected] of cases) {
    const p = storeProblem(err, documents, op, 'd1', { name: 'x', authorId: 'a1' }, registry) as Record<string, unknown>
    const { status, ...rest } = expected
    t.match(p, { statusCode: status, ...rest }, name)
    t.notMatch(JSON.stringify({ detail: p.detail, context: p.context }), /_key|_fkey|_pkey|_check/, `${name}: no constraint names`)
  }
  const uniqueObject = storeProblem(new UniqueViolation({ constraint: 'documents_name_key' }), documents, 'write', 'd', { name: { odd: true } }, registry) as Record<string, any>
  t.notOk('value' in uniqueObject.context[0], 'a value that is not a scalar is not echoed')
  const email = defineResource({ ...base, fields: { name: Type.String(), email: Type.String() }, unique: ['email'] })
  t.match(storeProblem(new UniqueViolation({ constraint: 'notes_email_key' }), email, 'write', 'n', { email: 'a@b' }, registry), { detail: "A note with email 'a@b' already exists; choose another email.", context: [{ code: 'UNIQUE_EMAIL_VIOLATION' }] })
  const refObject = storeProblem(new ForeignKeyViolation({ constraint: 'documents_authorId_fkey' }), documents, 'write', 'd', { authorId: ['x'] }, registry) as Record<string, any>
  t.notOk('value' in refObject.context[0])
  const other = new Error('not a store error')
  t.equal(storeProblem(other, documents, 'write', 'd', {}, registry), other)
})

t.test('resource plugin: options are checked at registration', async t => {
  const store = await pglite.create(t)
  const cyclic = defineResource({ ...base, fields: { name: Type.String() } })
  ;(cyclic.references as unknown[]).push({ field: 'name', resource: cyclic })
  const table: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no store', { resources: [authors] }, /store must be a Store/],
    ['no resources', { store, resources: [] }, /resources must be a non-empty array/],
    ['not definitions', { store, resources: [{}] }, /resources must be a non-empty array/],
    ['twice', { store, resources: [authors, authors] }, /distinct tables, got authors twice/],
    ['missing reference', { store, resources: [documents] }, /must include authors, which documents\.authorId references/],
    ['cycle', { store, resources: [cyclic] }, /in a cycle, got one through notes/],
    ['unknown option', { store, resources: [authors], idempotencyTTL: 1000 }, /^resource plugin: unknown option idempotencyTTL \(did you mean idempotencyTtl\?\); the options are store, resources, idempotencyTtl, migrations, withoutAuth$/],
    ['migrations not a path', { store, resources: [authors], migrations: '' }, /^resource plugin: migrations must be a directory path or false, got ""$/],
    ['migrations not a path either', { store, resources: [authors], migrations: true }, /^resource plugin: migrations must be a directory path or false, got true$/],
    ['a migrations directory that is not there', { store, resources: [authors], migrations: '/nonexistent/migrations' }, /^migrations: the directory \/nonexistent\/migrations does not exist$/],
    // Ignored, keys would be remembered for another time than asked.
    ['idempotencyTtl beside a registered idempotency plugin', { store, resources: [authors], idempotencyTtl: 1000, registered: true }, /idempotencyTtl applies only when the resource plugin registers the idempotency plugin itself/]
  ]
  for (const [name, { registered, ...opts }, message] of table) {
    const app = await prerequisites(Fastify())
    if (registered === true) await app.register(idempotency, { store })
    await t.rejects(async () => { await app.register(resource, opts as never); await app.ready() }, { name: 'TypeError', message }, name)
  }
  t.strictSame(dependencyOrder([documents, authors]).map(r => r.collection), ['authors', 'documents'])
  const own = await prerequisites(Fastify())
  await own.register(resource, { store, resources: [authors], idempotencyTtl: 1000, withoutAuth: true })
  await own.ready()
  t.ok(own.hasDecorator('idempotency'), 'idempotencyTtl: the idempotency plugin it registers itself')
  await own.close()
})

t.test('actions, softDelete and subCollections: what cannot work is refused, naming the option', async t => {
  const fields = {
    name: Type.String(),
    status: UpperSnakeEnum(['DRAFT', 'PUBLISHED', 'ARCHIVED'], { default: 'DRAFT' }),
    publishedDateTime: Nullable(DateTime()),
    note: Nullable(Type.String()),
    lines: Type.Array(Type.Object({ number: Int32({ minimum: 1, maximum: 100 }), text: Nullable(Type.String()) }), { default: [] }),
    optionalKey: Type.Array(Type.Object({ n: Nullable(Int32({ minimum: 1, maximum: 100 })) }), { default: [] }),
    boolKey: Type.Array(Type.Object({ b: Type.Boolean() }), { default: [] }),
    scalars: Type.Array(Type.String(), { default: [] })
  }
  const of = (extra: Record<string, unknown>): unknown => defineResource({ ...base, fields, ...extra } as never)
  const publish = { from: ['DRAFT'], to: 'PUBLISHED' }
  const table: Array<[string, Record<string, unknown>, RegExp]> = [
    ['softDelete not a boolean', { softDelete: 'yes' }, /^defineResource: softDelete must be a boolean, got "yes"$/],
    ['actions not an object', { actions: [publish] }, /^defineResource: actions must be an object of actions by name/],
    ['an action name in capitals', { actions: { Publish: publish } }, /^defineResource: actions must be action names in lowercase letters, digits and -, got "Publish"/],
    ['an action named restore', { softDelete: true, actions: { restore: publish } }, /^defineResource: actions\.restore must be another name: restore is the action of a soft-deletable resource/],
    ['an action that is no object', { actions: { publish: 'PUBLISHED' } }, /^defineResource: actions\.publish must be \{ from, to, field\?, set\?, summary\? \}/],
    ['a field that does not exist', { actions: { publish: { ...publish, field: 'state' } } }, /^defineResource: actions\.publish\.field must be one of the fields \(name, status/],
    ['a field that is no enum', { actions: { publish: { ...publish, field: 'name' } } }, /^defineResource: actions\.publish\.field must be an enum field, whose values are the states, got "name"/],
    ['from empty', { actions: { publish: { ...publish, from: [] } } }, /^defineResource: actions\.publish\.from must be a non-empty list of states of status \(DRAFT, PUBLISHED, ARCHIVED\)/],
    ['from not a list', { actions: { publish: { ...publish, from: 'DRAFT' } } }, /actions\.publish\.from must be a non-empty list/],
    ['from an unknown state', { actions: { publish: { ...publish, from: ['GONE'] } } }, /actions\.publish\.from must be a non-empty list of states/],
    ['to an unknown state', { actions: { publish: { ...publish, to: 'GONE' } } }, /^defineResource: actions\.publish\.to must be a state of status \(DRAFT, PUBLISHED, ARCHIVED\), got "GONE"/],
    ['set of the state field', { actions: { publish: { ...publish, set: { status: 'ARCHIVED' } } } }, /^defineResource: actions\.publish\.set must be fields other than status, got "status"/],
    ['set of an unknown field', { actions: { publish: { ...publish, set: { when: 'now' } } } }, /actions\.publish\.set must be fields other than status, got "when"/],
    ['now on a field that is no date-time', { actions: { publish: { ...publish, set: { note: 'now' } } } }, /^defineResource: actions\.publish\.set\.note must be a value, or 'now' on a date-time field, got "now"/],
    ['subCollections not an object', { subCollections: ['lines'] }, /^defineResource: subCollections must be an object of \{ key \} by array field/],
    ['a sub-collection that is no field', { subCollections: { rows: { key: 'number' } } }, /^defineResource: subCollections must be array fields \(name, status/],
    ['a sub-collection of scalars', { subCollections: { scalars: { key: 'number' } } }, /^defineResource: subCollections must be array fields of objects, got "scalars"/],
    ['a field that is no array', { subCollections: { name: { key: 'number' } } }, /subCollections must be array fields of objects, got "name"/],
    ['no key', { subCollections: { lines: {} } }, /^defineResource: subCollections\.lines\.key must be a property of its items \(number, text\)/],
    ['no options', { subCollections: { lines: null } }, /^defineResource: subCollections\.lines\.key must be a property of its items/],
    ['an unknown key', { subCollections: { lines: { key: 'id' } } }, /subCollections\.lines\.key must be a property of its items \(number, text\), got "id"/],
    ['a key that may be null', { subCollections: { optionalKey: { key: 'n' } } }, /^defineResource: subCollections\.optionalKey\.key must be a string or integer property that cannot be null, got "n"/],
    ['a key that is no string or integer', { subCollections: { boolKey: { key: 'b' } } }, /subCollections\.boolKey\.key must be a string or integer property that cannot be null, got "b"/]
  ]
  for (const [name, extra, message] of table) t.throws(() => of(extra), message, name)

  const plain = of({}) as ResourceDefinition
  t.strictSame(plain.api.actions.map(a => a.name), [], 'no actions by default')
  const soft = of({ softDelete: true }) as ResourceDefinition
  t.strictSame(soft.api.actions.map(a => a.name), ['restore'], 'a soft-deletable resource can be restored')
  const both = of({ softDelete: true, actions: { publish: { ...publish, set: { publishedDateTime: 'now', note: 'published' } }, archive: { from: ['DRAFT', 'PUBLISHED'], to: 'ARCHIVED', summary: 'Archives it' } }, subCollections: { lines: { key: 'number' } } }) as ResourceDefinition
  t.strictSame(both.api.actions.map(a => [a.name, a.field, a.from, a.to, a.summary]), [
    ['publish', 'status', ['DRAFT'], 'PUBLISHED', 'Moves the entity to PUBLISHED'],
    ['archive', 'status', ['DRAFT', 'PUBLISHED'], 'ARCHIVED', 'Archives it'],
    ['restore', 'deletedDateTime', [], '', 'Brings a deleted entity back']
  ])
  t.strictSame(both.api.subCollections.map(s => [s.field, s.key]), [['lines', 'number']])
  t.strictSame((of({ actions: { publish } }) as ResourceDefinition).api.actions.map(a => a.name), ['publish'], 'no restore without soft delete')
})
