import type { CursorCodec } from './cursor.js'
import type { CollectionRoute } from './route.js'
import type { ResolvedQuery } from './resolve.js'

/** Request decorator holding what the envelope of a collection request needs; not public. */
export const kCollection: unique symbol = Symbol('svc-query.collection')

export interface CollectionState {
  readonly route: CollectionRoute
  readonly resolved: ResolvedQuery
  readonly codec: CursorCodec
  /** A POST search: its links point to the GET form of the collection. */
  readonly search: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    [kCollection]: CollectionState | null
  }
}
