import fp from 'fastify-plugin'
import type { FastifyInstance, FastifySchema } from 'fastify'
import { Ajv, type Options as AjvOptions } from 'ajv'
import addStandardFormats from 'ajv-formats'
import fastJson, { type Schema as SerializerSchema } from 'fast-json-stringify'
import { addConventionFormats, conventionFormats } from '../../schemas/formats.js'
import { refusingNul } from './nul.js'

export interface ValidationPluginOptions {
  /** Extra Ajv options merged over the suite's choices (for both instances). */
  ajv?: AjvOptions
}

/**
 * Bodies are validated strictly: no type coercion, unknown properties rejected (never
 * trimmed), every violation collected so the problem lists one context item per violation.
 * Query strings, headers and path parameters arrive as text, so they are coerced, and a
 * single query value is accepted where the schema wants an array (repeatable parameters).
 * A body string holding U+0000 is refused too (nul.ts).
 */
const common: AjvOptions = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  verbose: true,
  strict: false,
  addUsedSchema: false
}

function makeAjv (coerce: AjvOptions['coerceTypes'], extra: AjvOptions | undefined): Ajv {
  const ajv = new Ajv({ ...common, coerceTypes: coerce, ...extra })
  addStandardFormats.default(ajv)
  return addConventionFormats(ajv)
}

async function validationPlugin (fastify: FastifyInstance, opts: ValidationPluginOptions): Promise<void> {
  if (opts.ajv !== undefined && (typeof opts.ajv !== 'object' || opts.ajv === null)) {
    throw new TypeError('validation plugin: ajv must be an object of Ajv options')
  }
  const strict = makeAjv(false, opts.ajv)
  const coercing = makeAjv('array', opts.ajv)
  let sharedAdded = false

  // Schemas added with fastify.addSchema() are shared components ($ref targets).
  function addShared (): void {
    if (sharedAdded) return
    sharedAdded = true
    for (const schema of Object.values(fastify.getSchemas())) {
      strict.addSchema(schema as object)
      coercing.addSchema(schema as object)
    }
  }

  // Responses are serialized by fast-json-stringify as usual; it only consults Ajv to pick a
  // branch of a union (e.g. cursor or offset paging), and must know the convention's formats then.
  const formats = Object.fromEntries(Object.entries(conventionFormats).map(([name, def]) => [name, def.validate]))
  fastify.setSerializerCompiler(({ schema }) => {
    addShared()
    return fastJson(schema as SerializerSchema, { schema: fastify.getSchemas() as Record<string, SerializerSchema>, ajv: { formats } })
  })

  fastify.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) => {
    addShared()
    if (httpPart !== 'body') return coercing.compile(schema as object)
    // A body bound for the store: U+0000 refused with the schema's own errors (nul.ts).
    return refusingNul(strict.compile(schema as object))
  })
}

export default fp(validationPlugin, { fastify: '5.x', name: 'svc-validation' })
