import fp from 'fastify-plugin'
import type { FastifyInstance, FastifySchema } from 'fastify'
import { Ajv, type Options as AjvOptions } from 'ajv'
import addStandardFormats from 'ajv-formats'
import fastJson, { type Schema as SerializerSchema } from 'fast-json-stringify'
import { addConventionFormats, conventionFormats } from '../../schemas/formats.js'
import { refuseUnknownOptions, shownValue, type OptionKeys } from '../shared/options.js'
import { addAjvPlugins, checkAjvPlugins, type AjvPluginEntry } from './ajv-plugins.js'
import { refusingNul } from './nul.js'
import { strictNumerals } from './numerals.js'
import { textUnions } from './text-unions.js'
import { compiledOnce } from '../shared/compiled-once.js'
import { once } from '../shared/dependencies.js'
import { branchTest, projectingSerializer } from './projection.js'

export interface ValidationPluginOptions {
  /** Extra Ajv options merged over the suite's choices (for both instances), e.g. `{ keywords: ['x-internal'] }`. */
  ajv?: AjvOptions
  /**
   * Ajv plugins applied to both instances, as Fastify's `ajv.plugins` takes them: a plugin, or
   * `[plugin, options]`. The plugin replaces the server's validator compiler, so the server's
   * own `ajv` option does not reach it: keywords and formats of yours are added here.
   */
  plugins?: readonly AjvPluginEntry[]
}

const OPTION_KEYS: OptionKeys<ValidationPluginOptions> = { ajv: true, plugins: true }

/**
 * Bodies are validated strictly: no type coercion, unknown properties rejected (never
 * trimmed), every violation collected so the problem lists one context item per violation.
 * Query strings, headers and path parameters arrive as text, so they are coerced (a number
 * from decimal digits only), and a single query value is accepted where the schema wants an
 * array (repeatable parameters).
 * A body string holding U+0000 is refused too (nul.ts).
 */
const common: AjvOptions = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  verbose: true,
  // A keyword or format Ajv does not know fails the route's registration: ignored, it would
  // let through what the schema meant to refuse. Ajv's other strict checks stay off (TypeBox
  // unions and optional members trip them without being wrong).
  strict: false,
  strictSchema: true,
  // `strict: false` turns this off too: `1e400` in a body or a query reads as Infinity, and a
  // number type would take it (Fastify's own Ajv refuses it).
  strictNumbers: true,
  addUsedSchema: false,
  // Ajv's optimising pass over the code it generates lengthens every start (one compile per
  // route schema) and gains nothing measurable per request.
  code: { optimize: false }
}

// The OpenAPI Schema Object's own annotations, which route schemas written for
// @fastify/swagger carry (`example` above all): known, so strict schemas still compile.
const OPENAPI_ANNOTATIONS = ['example', 'xml', 'externalDocs']

function makeAjv (coerce: AjvOptions['coerceTypes'], opts: ValidationPluginOptions): Ajv {
  const keywords = [...new Set([...OPENAPI_ANNOTATIONS, ...(opts.ajv?.keywords ?? [])])]
  const ajv = new Ajv({ ...common, coerceTypes: coerce, ...opts.ajv, keywords })
  addStandardFormats.default(ajv)
  addAjvPlugins(ajv, opts.plugins)
  addConventionFormats(ajv)
  // Ajv adds the formats of its options first, and the suite's above would replace the
  // application's own of the same name: its options are to win, so they are added again.
  for (const [name, format] of Object.entries(opts.ajv?.formats ?? {})) if (format !== undefined) ajv.addFormat(name, format)
  return ajv
}

/** Compiles with `ajv`; a schema Ajv refuses (an unknown keyword) fails the boot with how to teach it. */
function compile (ajv: Ajv, schema: object): ReturnType<Ajv['compile']> {
  try {
    return ajv.compile(schema)
  } catch (err) {
    throw new Error(`validation plugin: ${(err as Error).message}; add your keywords and formats with validation({ plugins: [...] }) or { ajv: { keywords: [...] } } (the server's own ajv option does not reach this plugin)`, { cause: err })
  }
}

type Schemas = Record<string, unknown>
type ValidatorCompiler = Parameters<FastifyInstance['setValidatorCompiler']>[0]
type SerializerCompiler = Parameters<FastifyInstance['setSerializerCompiler']>[0]

async function validationPlugin (fastify: FastifyInstance, opts: ValidationPluginOptions): Promise<void> {
  refuseUnknownOptions('validation', opts, OPTION_KEYS)
  if (opts.ajv !== undefined && (typeof opts.ajv !== 'object' || opts.ajv === null || Array.isArray(opts.ajv))) {
    throw new TypeError('validation plugin: ajv must be an object of Ajv options')
  }
  // Spread into the suite's list below: a string would become a keyword per character.
  const keywords: unknown = opts.ajv?.keywords
  if (keywords !== undefined && !Array.isArray(keywords)) {
    throw new TypeError(`validation plugin: ajv.keywords must be an array of keywords such as ["x-internal"], got ${shownValue(keywords)}`)
  }
  checkAjvPlugins(opts.plugins)

  /**
   * The validators over one set of shared schemas (`$ref` targets, added with `addSchema()`),
   * read when the first one is compiled: every schema of the context is added by then.
   */
  function validators (shared: () => Schemas): ValidatorCompiler {
    const strict = makeAjv(false, opts)
    const coercing = makeAjv('array', opts)
    let sharedAdded = false
    function addShared (): void {
      if (sharedAdded) return
      sharedAdded = true
      for (const schema of Object.values(shared())) {
        strict.addSchema(schema as object)
        coercing.addSchema(schema as object)
      }
    }
    // A body bound for the store: U+0000 refused with the schema's own errors (nul.ts).
    const bodyValidator = compiledOnce((schema) => refusingNul(compile(strict, schema)))
    // Text coerced to the schema's types, numbers only from decimal digits (numerals.ts).
    // Routes repeat schemas (a HEAD takes its GET's, collections share their query string):
    // each distinct one is compiled once.
    // A union of a number and text keeps any other writing as text (text-unions.ts).
    const textValidator = compiledOnce((schema) => strictNumerals(textUnions(compile(coercing, schema), schema, (s) => compile(coercing, s)), schema))
    return ({ schema, httpPart }) => {
      addShared()
      return httpPart === 'body' ? bodyValidator(schema as object) : textValidator(schema as object)
    }
  }

  // Responses are written as fast-json-stringify writes them: by it, or for a page of plain data
  // by projection.ts, faster and to the same bytes. It consults Ajv only to pick a branch of a union
  // (e.g. cursor or offset paging), and must know the convention's formats then.
  const formats = Object.fromEntries(Object.entries(conventionFormats).map(([name, def]) => [name, def.validate]))
  const branch = branchTest(formats)
  function serializers (shared: () => Schemas): SerializerCompiler {
    const serializer = compiledOnce((schema) => projectingSerializer(schema,
      fastJson(schema as SerializerSchema, { schema: shared() as Record<string, SerializerSchema>, ajv: { formats } }), branch))
    return ({ schema }) => serializer(schema as object)
  }

  // A context below that adds schemas of its own gets its compilers from these builders (Fastify
  // builds them anew there, from the server's original factories unless told otherwise): over its
  // schemas, with the same rules, rather than Fastify's default Ajv, which coerces bodies and
  // drops unknown properties. One per distinct set of schemas: Fastify asks once per route.
  const built = { validators: new Map<string, ValidatorCompiler>(), serializers: new Map<string, SerializerCompiler>() }
  function builder<C> (cache: Map<string, C>, make: (shared: () => Schemas) => C): (schemas: Schemas) => C {
    return (schemas) => {
      const key = JSON.stringify(schemas)
      let compiler = cache.get(key)
      if (compiler === undefined) {
        compiler = make(() => schemas)
        cache.set(key, compiler)
      }
      return compiler
    }
  }
  fastify.setSchemaController({
    compilersFactory: {
      buildValidator: builder(built.validators, validators) as never,
      buildSerializer: builder(built.serializers, serializers) as never
    }
  })

  // This context's own: over the schemas added to it (fastify.addSchema()), before or after this plugin.
  fastify.setValidatorCompiler<FastifySchema>(validators(() => fastify.getSchemas()))
  fastify.setSerializerCompiler(serializers(() => fastify.getSchemas()))
}

export type { AjvPlugin, AjvPluginEntry } from './ajv-plugins.js'
export { refusingNul } from './nul.js'
export default fp(once('validation', validationPlugin), { fastify: '5.x', name: 'svc-validation' })
