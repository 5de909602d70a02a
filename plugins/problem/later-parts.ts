import type { FastifyRequest } from 'fastify'
import type { ErrorObject } from 'ajv'
import type { ContextItem } from '../../schemas/problem.js'
import { contextFromAjv } from './validation-context.js'

// The order in which Fastify validates a request's parts, stopping at the first that fails,
// and the request property each part's data is read from.
const PARTS = ['params', 'body', 'querystring', 'headers'] as const
const DATA = { params: 'params', body: 'body', querystring: 'query', headers: 'headers' } as const

type Validator = ((data: unknown, context?: object) => unknown) & { errors?: ErrorObject[] | null, schemaEnv?: unknown }

/**
 * The violations of the parts Fastify left unchecked after part `failed` failed, so that one
 * answer names every violation of the request (convention, Errors 5: one context item per
 * violation), each part validated as Fastify would have.
 */
export function laterPartErrors (request: FastifyRequest, failed: string): Array<{ part: string, errors: ErrorObject[] }> {
  const index = (PARTS as readonly string[]).indexOf(failed)
  if (index < 0) return []
  const found: Array<{ part: string, errors: ErrorObject[] }> = []
  for (const part of PARTS.slice(index + 1)) {
    // Absent, or a body schema per media type (an object): nothing to run here.
    const validate = request.getValidationFunction(part) as unknown
    if (typeof validate !== 'function') continue
    const fn = validate as Validator
    const key = DATA[part]
    const data = (request as unknown as Record<string, unknown>)[key] ?? null
    let valid: unknown
    try {
      // As Fastify calls it: Ajv may coerce the part's root value only through its parent.
      valid = fn.schemaEnv !== undefined ? fn(data, { parentData: request, parentDataProperty: key }) : fn(data)
    } catch {
      continue // the first violation is answered; a validator that throws adds nothing to it
    }
    // An asynchronous validator ($async) is not waited for: the answer names what is known now,
    // and its refusal, unobserved, would end the process.
    if (typeof (valid as Promise<unknown> | undefined)?.then === 'function') (valid as Promise<unknown>).then(undefined, () => {})
    else if (valid === false && Array.isArray(fn.errors)) found.push({ part, errors: fn.errors })
  }
  return found
}

/**
 * The context items of a failed validation: the violations of the part that failed, then
 * those of the parts Fastify left unchecked after it (`laterPartErrors`).
 */
export function validationItems (request: FastifyRequest, errors: ErrorObject[], failed: string): ContextItem[] {
  return laterPartErrors(request, failed).reduce((all, later) => all.concat(contextFromAjv(later.errors, later.part)), contextFromAjv(errors, failed))
}
