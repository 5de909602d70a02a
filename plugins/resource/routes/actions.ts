import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import { Id } from '../../../schemas/types.js'
import { withArticle } from '../../shared/article.js'
import { NoQuery } from '../../shared/no-query.js'
import type { Served } from './served.js'
import { itemOp, newEtagHeader, refuseInvalid, writeItem } from './writes.js'

type Row = Record<string, unknown>

/** An action's request body: none, or `{}` (reference contract: Actions). */
const NoBody = Type.Object({}, { additionalProperties: false, description: 'No body, or an empty object.' })

/**
 * `POST <item>/<action>` for each action of a resource (conventions: Method rules 4, "POST for
 * a non-RESTful action returns 200"): 200 with the entity and its `ETag`; 409
 * `INVALID_STATE_TRANSITION` when the action does not apply from the current state (decided on
 * the locked row, so of two concurrent ones only the first applies); `If-Match` honoured when
 * sent; 404 for an unknown entity.
 */
export function registerActionRoutes (fastify: FastifyInstance, s: Served): void {
  const { def } = s
  const params = Type.Object({ [def.idParam]: Id() })
  for (const action of def.api.actions) {
    const url = `${def.path}/:${def.idParam}/${action.name}`
    fastify.post(url, {
      schema: {
        tags: [def.collection],
        summary: action.name === 'restore' ? `Restore a deleted ${def.name}` : `${action.name.charAt(0).toUpperCase()}${action.name.slice(1)} ${withArticle(def.name)}`,
        description: action.name === 'restore'
          ? `Brings a deleted ${def.name} back; 409 INVALID_STATE_TRANSITION when it is not deleted, or UNIQUE_..._VIOLATION when a unique value was taken meanwhile.`
          : `${action.summary}: from ${action.from.join(' or ')} to ${action.to}; 409 INVALID_STATE_TRANSITION from any other state.`,
        params,
        querystring: NoQuery,
        body: NoBody,
        response: { 200: def.api.entity }
      },
      attachValidation: true,
      // No body is an empty one (the document says so: optionalBody): only a body with members is refused.
      config: { auth: { scopes: [...def.api.scopes.write] }, problems: [404, 409, 412], openapi: { responseHeaders: newEtagHeader(200), optionalBody: true } } as FastifyContextConfig,
      // Only an absent body: a JSON `null` is a body, and not `{}`.
      preValidation: async (request) => { if (request.body === undefined) request.body = {} }
    }, async (request, reply) => {
      refuseInvalid(s, request)
      const id = (request.params as Record<string, string>)[def.idParam] as string
      const path = s.itemPath(def, id)
      const row = await writeItem(s, request, itemOp(request, 'transition', id, {}, action.name), path, 200) as Row
      const entity = s.rep.toEntity(row)
      reply.header('etag', entity.etag as string)
      return entity
    })
  }
}
