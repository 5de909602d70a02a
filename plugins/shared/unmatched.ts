import type { FastifyRequest } from 'fastify'

/**
 * Whether no route of the request's path serves it: Fastify's 404, or the catch-all
 * `OPTIONS *` route a CORS plugin adds (@fastify/cors does), which says nothing about the
 * path. Such a request has nothing to protect or negotiate; the methods plugin answers it.
 */
export function matchedNoRoute (request: FastifyRequest): boolean {
  return request.is404 || (request.method === 'OPTIONS' && request.routeOptions.url === '*')
}
