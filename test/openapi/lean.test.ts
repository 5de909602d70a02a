import t from 'tap'
import { caseHeaders, headerCase, hoistCommonParameters, omitDefaults, omitEchoedDescriptions, shareNullable, shareFormats, shareRepeated, shareSchemas, shareTitled } from '../../plugins/openapi/lean.js'
import { formatPattern } from '../../schemas/patterns.js'

type Doc = Record<string, any>

t.test('headerCase: header names in their usual spelling', async t => {
  const cases: Array<[string, string]> = [
    ['etag', 'ETag'],
    ['x-request-id', 'X-Request-ID'],
    ['www-authenticate', 'WWW-Authenticate'],
    ['svc-execution-context', 'Svc-Execution-Context'],
    ['ratelimit-remaining', 'RateLimit-Remaining'],
    ['If-None-Match', 'If-None-Match'],
    ['user-agent', 'User-Agent'],
    ['webhook-signature', 'webhook-signature'],
    ['Webhook-Id', 'webhook-id']
  ]
  for (const [name, usual] of cases) t.equal(headerCase(name), usual, name)
})

t.test('caseHeaders renames header parameters and response headers, nothing else', async t => {
  const paths: Doc = {
    '/a': {
      get: {
        parameters: [{ in: 'header', name: 'x-request-id' }, { in: 'query', name: 'limit' }],
        responses: { 200: { description: 'OK', headers: { etag: { schema: {} } } }, 404: { description: 'Not Found' } }
      },
      post: { responses: {} },
      parameters: [{ in: 'path', name: 'id' }]
    }
  }
  caseHeaders(paths)
  t.strictSame(paths['/a'].get.parameters.map((p: Doc) => p.name), ['X-Request-ID', 'limit'])
  t.strictSame(Object.keys(paths['/a'].get.responses[200].headers), ['ETag'])
  t.strictSame(paths['/a'].get.responses[404], { description: 'Not Found' })
})

t.test('hoistCommonParameters states the path and header parameters every operation of a path takes once, on the path', async t => {
  const ua = { in: 'header', name: 'User-Agent', schema: { type: 'string' } }
  const key = { in: 'header', name: 'Svc-Idempotency-Key', schema: { type: 'string' } }
  const limit = { in: 'query', name: 'limit', schema: { type: 'integer' } }
  const id = { in: 'path', name: 'id', required: true, schema: { type: 'string' } }
  const paths: Doc = {
    '/a': { get: { parameters: [ua, limit], responses: {} }, post: { parameters: [ua, key], responses: {} }, options: { parameters: [ua], responses: {} } },
    '/b': { get: { parameters: [ua], responses: {} }, post: { parameters: [key], responses: {} } },
    '/c': { get: { responses: {} } },
    '/d/{id}': { get: { parameters: [id, limit], responses: {} }, options: { parameters: [id], responses: {} } },
    '/e': { get: { parameters: [limit], responses: {} }, head: { parameters: [limit], responses: {} } }
  }
  hoistCommonParameters(paths)
  t.strictSame(paths['/a'].parameters, [ua])
  t.strictSame(paths['/a'].get.parameters, [limit])
  t.strictSame(paths['/a'].post.parameters, [key])
  t.notOk('parameters' in paths['/a'].options, 'an operation left with none has none')
  t.notOk('parameters' in paths['/b'], 'nothing common: nothing hoisted')
  t.strictSame(paths['/b'].get.parameters, [ua])
  t.strictSame(paths['/c'], { get: { responses: {} } })
  t.strictSame(paths['/d/{id}'].parameters, [id], 'a path parameter, declared once for the path')
  t.strictSame(paths['/d/{id}'].get.parameters, [limit])
  t.notOk('parameters' in paths['/d/{id}'].options)
  t.notOk('parameters' in paths['/e'], 'a query parameter stays with its operations')
})

t.test('omitEchoedDescriptions: a body schema does not repeat its response\'s or request body\'s description', async t => {
  const paths: Doc = {
    '/a': {
      post: {
        requestBody: { description: 'The thing.', content: { 'application/json': { schema: { type: 'object', description: 'The thing.' } } } },
        responses: {
          200: { description: 'The thing.', content: { 'application/json': { schema: { type: 'object', description: 'The thing.' } }, 'text/csv': { schema: {} } } },
          201: { description: 'Created.', content: { 'application/json': { schema: { type: 'object', description: 'Another text.' } } } },
          204: { description: 'No Content' },
          default: { $ref: '#/components/responses/Problem' }
        }
      }
    }
  }
  omitEchoedDescriptions(paths)
  const post = paths['/a'].post
  t.strictSame(post.requestBody.content['application/json'].schema, { type: 'object' })
  t.equal(post.requestBody.description, 'The thing.', 'the outer description stays')
  t.strictSame(post.responses[200].content['application/json'].schema, { type: 'object' })
  t.equal(post.responses[200].description, 'The thing.')
  t.strictSame(post.responses[201].content['application/json'].schema, { type: 'object', description: 'Another text.' }, 'a description of its own stays')
  t.strictSame(post.responses[204], { description: 'No Content' })
})

t.test('shareNullable: a component that admits null too refers to it', async t => {
  const problem = { type: 'object', required: ['title'], properties: { title: { type: 'string' } }, examples: [{ title: 'x' }] }
  const doc: Doc = {
    components: {
      schemas: {
        Problem: problem,
        Job: { type: 'object', properties: { problem: { ...problem, type: ['object', 'null'], description: 'Why it failed.' }, other: { ...problem, type: ['object', 'null'], required: [] }, plain: { ...problem } } }
      }
    },
    paths: { '/a': { get: { responses: { 200: { description: 'OK', content: { 'application/json': { schema: { ...problem, type: ['object', 'null'] } } } } } } } }
  }
  const out = shareNullable(doc) as Doc
  const job = out.components.schemas.Job.properties
  t.strictSame(job.problem, { anyOf: [{ $ref: '#/components/schemas/Problem' }, { type: 'null' }], description: 'Why it failed.' })
  t.strictSame(job.other.required, [], 'another shape stays')
  t.strictSame(job.plain, problem, 'not nullable: left to the other passes')
  t.strictSame(out.components.schemas.Problem, problem, 'the component itself stays')
  t.strictSame(out.paths['/a'].get.responses[200].content['application/json'].schema, { anyOf: [{ $ref: '#/components/schemas/Problem' }, { type: 'null' }] }, 'in paths too')
  t.strictSame(doc.components.schemas.Job.properties.problem.type, ['object', 'null'], 'the input is not changed')
  t.strictSame((shareNullable({ components: {}, paths: {} }) as Doc).components, { schemas: {} }, 'a document without schemas')
})

t.test('shareSchemas: a repeat of a component, or of a part of one, refers to it', async t => {
  const long = { type: 'string', maxLength: 200, pattern: '^[A-Za-z0-9._~-]+$', description: 'An identifier of the convention, long enough to be shared.' }
  const short = { type: 'string', maxLength: 20 }
  const entity = { type: 'object', required: ['id'], properties: { id: long, code: short, tags: { type: 'array', items: long } }, examples: [{ id: long }] }
  const doc: Doc = {
    paths: {
      '/x': {
        post: {
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { id: long, code: short } } } } },
          responses: { 200: { description: 'OK', content: { 'application/json': { schema: entity } } } }
        }
      }
    },
    components: { schemas: { Entity: entity, Other: { type: 'object', properties: { ownId: long } } } }
  }
  const out: Doc = shareSchemas(doc)
  const body = out.paths['/x'].post.requestBody.content['application/json'].schema
  t.strictSame(body.properties.id, { $ref: '#/components/schemas/Entity/properties/id' }, 'a part of a component')
  t.strictSame(body.properties.code, short, 'a small schema stays in place')
  t.strictSame(out.paths['/x'].post.responses[200].content['application/json'].schema, { $ref: '#/components/schemas/Entity' }, 'a whole component')
  t.strictSame(out.components.schemas.Entity.properties.id, long, 'the first place keeps the schema')
  t.strictSame(out.components.schemas.Entity.properties.tags.items, { $ref: '#/components/schemas/Entity/properties/id' }, 'a repeat inside the same component')
  t.strictSame(out.components.schemas.Entity.examples, [{ id: long }], 'examples are data')
  t.strictSame(out.components.schemas.Other.properties.ownId, { $ref: '#/components/schemas/Entity/properties/id' })
  t.strictSame(doc.components.schemas.Other.properties.ownId, long, 'the input is not changed')
})

t.test('shareSchemas: a schema that only requires more refers to the wider one and adds its list', async t => {
  const properties = { id: { type: 'string', maxLength: 200, description: 'The identifier, long enough to be worth a reference.' }, name: { type: 'string', maxLength: 200 } }
  const replacement = { type: 'object', additionalProperties: false, required: ['name'], properties }
  const doc: Doc = {
    paths: {},
    components: {
      schemas: {
        Replacement: replacement,
        Bulk: {
          type: 'object',
          properties: {
            update: { ...replacement, required: ['name', 'id'] },
            loose: { ...replacement, required: ['id'] },
            none: { type: 'object', additionalProperties: false, properties }
          }
        }
      }
    }
  }
  const out: Doc = shareSchemas(doc)
  const bulk = out.components.schemas.Bulk.properties
  t.strictSame(bulk.update, { $ref: '#/components/schemas/Replacement', required: ['name', 'id'] }, 'both lists hold: the one beside the reference is this one')
  t.strictSame(bulk.loose.required, ['id'], 'one that does not require what the wider one does keeps its schema')
  t.notOk('$ref' in bulk.loose)
  t.notOk('$ref' in bulk.none, 'without required: nothing to add')
  t.strictSame(out.components.schemas.Replacement, replacement, 'the wider one stays whole')
})

t.test('shareFormats: a plain or nullable string of a convention format refers to its component', async t => {
  const dateTime: Doc = { type: 'string', format: 'date-time', ...formatPattern({ type: 'string', format: 'date-time' }) }
  const doc: Doc = {
    paths: { '/a': { get: { parameters: [{ in: 'query', name: 'at', schema: { ...dateTime, maxLength: 24 } }], responses: {} } } },
    components: {
      schemas: {
        E: {
          type: 'object',
          properties: {
            at: { ...dateTime, description: 'When.' },
            gone: { ...dateTime, type: ['string', 'null'] },
            odd: { ...dateTime, pattern: '^x$' },
            other: { type: ['integer', 'null'], format: 'date-time' },
            text: { type: 'string', format: 'email' }
          }
        }
      }
    }
  }
  const out: Doc = shareFormats(doc)
  const props = out.components.schemas.E.properties
  t.strictSame(props.at, { $ref: '#/components/schemas/DateTime', description: 'When.' })
  t.strictSame(props.gone, { $ref: '#/components/schemas/NullableDateTime' }, 'a nullable place, a nullable component')
  t.strictSame(out.components.schemas.NullableDateTime, { ...dateTime, type: ['string', 'null'] })
  t.strictSame(out.components.schemas.DateTime, dateTime)
  t.strictSame(props.odd.pattern, '^x$', 'a pattern of its own: kept')
  t.strictSame(props.other, { type: ['integer', 'null'], format: 'date-time' }, 'not a string: kept')
  t.strictSame(props.text, { type: 'string', format: 'email' }, 'not a convention format: kept')
  t.strictSame(out.paths['/a'].get.parameters[0].schema, { $ref: '#/components/schemas/DateTime', maxLength: 24 }, 'in paths too')
})

t.test('shareFormats: a document without schemas', async t => {
  t.strictSame(shareFormats({ paths: {}, components: {} }), { paths: {}, components: { schemas: {} } })
})

t.test('shareSchemas: a document without schemas', async t => {
  const doc = { paths: { '/x': { get: { responses: { 200: { description: 'OK' } } } } }, components: {} }
  t.strictSame(shareSchemas(doc), { ...doc, components: { schemas: {} } })
})

t.test('shareRepeated: parameters, bodies, responses and headers used more than once become components', async t => {
  const lang = (v: string): Doc => ({ schema: { type: 'string', examples: [v] }, description: 'Language.' })
  const ua = { in: 'header', name: 'User-Agent', required: true, schema: { type: 'string' } }
  const limit = { in: 'query', name: 'limit', schema: { type: 'integer' } }
  const once = { in: 'query', name: 'once', schema: { type: 'integer' } }
  const body = { content: { 'application/json': { schema: { type: 'object' } } } }
  const bad = { description: 'Bad Request', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } }
  const badToo = { ...bad, headers: { 'Retry-After': { schema: { type: 'integer' } } } }
  const doc: Doc = {
    paths: {
      '/a': {
        parameters: [ua],
        get: { operationId: 'getA', parameters: [limit, once], responses: { 200: { description: 'OK', headers: { 'Content-Language': lang('en-US') } }, 400: bad } },
        post: { operationId: 'createA', requestBody: body, responses: { 200: { description: 'OK', headers: { 'Content-Language': lang('de-DE'), 'X-Once': { schema: { type: 'string' } } } }, 400: badToo } }
      },
      '/b': {
        parameters: [ua],
        get: { operationId: 'getB', parameters: [limit], responses: { 200: { description: 'OK', headers: { 'Content-Language': lang('en-US') } }, 400: bad } },
        put: { operationId: 'replaceB', requestBody: body, responses: { 204: { description: 'Done', headers: { 'Content-Language': lang('de-DE') } }, 400: badToo } },
        delete: { operationId: 'deleteB', requestBody: { content: {} }, responses: { 204: { description: 'Gone' } } }
      }
    },
    components: { schemas: {} }
  }
  const out: Doc = shareRepeated(doc)
  t.strictSame(Object.keys(out.components.headers), ['ContentLanguage', 'ContentLanguage2', 'RetryAfter'], 'one component per shape; a second shape is numbered')
  t.strictSame(out.components.parameters, { Limit: limit, UserAgent: ua })
  t.strictSame(out.paths['/a'].parameters, [{ $ref: '#/components/parameters/UserAgent' }], 'a path\'s own parameters too')
  t.strictSame(out.paths['/a'].get.parameters, [{ $ref: '#/components/parameters/Limit' }, once], 'one used once stays in place')
  t.strictSame(out.components.requestBodies, { CreateABody: body }, 'named after the first operation')
  t.strictSame(out.paths['/b'].put.requestBody, { $ref: '#/components/requestBodies/CreateABody' })
  t.strictSame(out.paths['/b'].delete.requestBody, { content: {} })
  t.strictSame(Object.keys(out.components.responses).sort(), ['BadRequest', 'BadRequest2', 'OK'], 'a problem answer is named by its status; a second shape of a response is numbered')
  t.strictSame(out.paths['/b'].put.responses[400], { $ref: '#/components/responses/BadRequest2' })
  t.strictSame(out.components.responses.BadRequest2.headers, { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } })
  t.strictSame(out.paths['/b'].delete.responses[204], { description: 'Gone' }, 'a response used once stays in place')
  t.strictSame(out.paths['/a'].post.responses[200].headers, { 'Content-Language': { $ref: '#/components/headers/ContentLanguage2' }, 'X-Once': { schema: { type: 'string' } } })
  t.strictSame(doc.paths['/a'].get.parameters[0], limit, 'the input is not changed')
})

t.test('shareRepeated names a response by its status, an OPTIONS operation\'s apart; the default problem is `Problem`', async t => {
  // Problem answers carry an example of their status (operation.ts): one response per status.
  const problem = (status: number): Doc => ({ description: 'A problem.', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, example: { status } } } })
  const problems = { description: 'Problems.', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } }
  const allowed = { description: 'Served methods in Allow.' }
  const done = { description: 'Done and acknowledged.' }
  const odd = { description: 'Some other answer' }
  const doc: Doc = {
    paths: {
      '/a': { get: { responses: { 204: done, 299: odd, 409: problem(409), default: problems } }, options: { responses: { 204: allowed, 400: problem(400) } } },
      '/b': { get: { responses: { 204: done, 299: odd, 409: problem(409), default: problems } }, options: { responses: { 204: allowed, 400: problem(400) } } }
    },
    components: { schemas: {} }
  }
  const out: Doc = shareRepeated(doc)
  t.strictSame(Object.keys(out.components.responses).sort(), ['BadRequest', 'Conflict', 'NoContent', 'OptionsNoContent', 'Problem', 'SomeOtherAnswer'])
  t.strictSame(out.paths['/b'].get.responses, { 204: { $ref: '#/components/responses/NoContent' }, 299: { $ref: '#/components/responses/SomeOtherAnswer' }, 409: { $ref: '#/components/responses/Conflict' }, default: { $ref: '#/components/responses/Problem' } }, 'a status without a reason phrase: by its description')
  t.strictSame(out.paths['/a'].options.responses[400], { $ref: '#/components/responses/BadRequest' }, 'a problem of an OPTIONS operation is named by its status alone')
})

t.test('shareRepeated adds no empty kind of component', async t => {
  const doc = { paths: { '/a': { get: { responses: { 200: { description: 'OK' } } } } }, components: { schemas: {} } }
  t.strictSame(shareRepeated(doc).components, { schemas: {} })
})

t.test('shareTitled: a titled schema becomes the component of its title', async t => {
  const values = (description?: string): Doc => ({ title: 'DateFilter', type: 'array', items: { type: 'string', format: 'date' }, ...(description === undefined ? {} : { description }) })
  const doc: Doc = {
    paths: {
      '/a': {
        get: {
          parameters: [{ in: 'query', name: 'from', schema: values('From.') }, { in: 'query', name: 'to', schema: values() }, { in: 'query', name: 'one', schema: { title: 'Once', type: 'string' } }],
          responses: {}
        }
      }
    },
    components: { schemas: { DateFilter: { type: 'string' }, Search: { type: 'object', properties: { on: values('On.') } }, Job: { title: 'Job', type: 'object' }, Task: { title: 'Work', type: 'string' } } }
  }
  doc.paths['/a'].get.responses = { 200: { description: 'OK', content: { 'application/json': { schema: { title: 'Job', type: 'object' } } } }, 201: { description: 'OK', content: { 'application/json': { schema: { title: 'Work', type: 'string', description: 'Done.' } } } } }
  const out: Doc = shareTitled(doc)
  const params = out.paths['/a'].get.parameters
  t.strictSame(params[0].schema, { $ref: '#/components/schemas/DateFilter2', description: 'From.' }, 'its description stays beside the reference')
  t.strictSame(params[1].schema, { $ref: '#/components/schemas/DateFilter2' })
  t.strictSame(params[2].schema, { $ref: '#/components/schemas/Once' }, 'used once: a component too')
  t.strictSame(out.components.schemas.Once, { title: 'Once', type: 'string' })
  t.strictSame(out.paths['/a'].get.responses[200].content['application/json'].schema, { $ref: '#/components/schemas/Job' }, 'a component titled with its name is that shape\'s component')
  t.strictSame(out.paths['/a'].get.responses[201].content['application/json'].schema, { $ref: '#/components/schemas/Task', description: 'Done.' }, 'whatever its title')
  t.strictSame(out.components.schemas.Task, { title: 'Work', type: 'string' }, 'a component\'s root stays whole')
  t.notOk(out.components.schemas.Work, 'no second component of a titled component')
  t.strictSame(out.components.schemas.DateFilter2, values(), 'a name taken already is numbered')
  t.strictSame(out.components.schemas.DateFilter, { type: 'string' })
  t.strictSame(out.components.schemas.Search.properties.on, { $ref: '#/components/schemas/DateFilter2', description: 'On.' }, 'in components too')
})

t.test('shareTitled: a document without schemas', async t => {
  const doc = { paths: {}, components: {} }
  t.strictSame(shareTitled(doc), { paths: {}, components: { schemas: {} } })
})

t.test('omitDefaults drops required: false from parameters, of operations and of paths', async t => {
  const paths: Doc = {
    '/a/{id}': {
      parameters: [{ in: 'header', name: 'X-A', required: false }],
      get: { parameters: [{ in: 'path', name: 'id', required: true }, { in: 'query', name: 'q', required: false }], responses: {} },
      post: { responses: {} }
    }
  }
  omitDefaults(paths)
  t.strictSame(paths['/a/{id}'].parameters, [{ in: 'header', name: 'X-A' }])
  t.strictSame(paths['/a/{id}'].get.parameters, [{ in: 'path', name: 'id', required: true }, { in: 'query', name: 'q' }])
})
