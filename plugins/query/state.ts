import type { CursorCodec } from './cursor.js'
import type { CollectionRoute } from './route.js'
import type { ResolvedQuery } from './resolve.js'

/** The request decoration holding a collection request's state; not public. */
export const kCollection = Symbol('svc-query.collection')

/** What the envelope of a collection request needs (`request[kCollection]`); not public. */
export interface CollectionState {
  readonly route: CollectionRoute
  readonly resolved: ResolvedQuery
  readonly codec: CursorCodec
  /** A POST search: its links point to the GET form of the collection. */
  readonly search: boolean
}
