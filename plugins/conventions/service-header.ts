import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyRequest } from 'fastify'
import type { ContextItem } from '../../schemas/problem.js'
import { parseServiceHeader, type ServiceDescription } from '../shared/service-header.js'

export const SERVICE_HEADER = 'svc-service'

export type { CallingService, ServiceDescription, ServiceHeaderResult, ServiceHeaderViolation } from '../shared/service-header.js'

/** What the service checks and sends (conventions: Headers, Svc-Service). */
export interface ServiceHeaderOptions {
  /** Checks a well-formed `id` against a registry; `false` gives 400. Default: no check. */
  registry?: (id: string, request: FastifyRequest) => boolean | Promise<boolean>
  /** This service's own description, sent as `Svc-Service` on every response ("both" directions). Default: not sent. */
  self?: ServiceDescription
}

function item (message: string, value: string): ContextItem {
  return { code: 'INPUT_INVALID', message, field: 'Svc-Service', source: 'header', value }
}

/**
 * Reads `Svc-Service` into `request.callingService`; returns one context item per
 * violation (conventions: "An invalid format should give 400", registry failures too).
 */
export async function applyServiceHeader (request: FastifyRequest, headers: IncomingHttpHeaders, registry: ServiceHeaderOptions['registry']): Promise<ContextItem[]> {
  const value = headers[SERVICE_HEADER]
  if (typeof value !== 'string') return []
  const parsed = parseServiceHeader(value)
  if (!parsed.ok) return parsed.violations.map(v => item(v.message, v.value))
  const service = parsed.service
  if (registry !== undefined && !await registry(service.id, request)) {
    return [item('must have the id of a registered service; check the id this service was given', service.id)]
  }
  request.callingService = service
  return []
}
