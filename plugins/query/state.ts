import type { CursorCodec } from './cursor.js'
import type { CollectionRoute } from './route.js'
import type { ResolvedQuery } from './resolve.js'

/** What the envelope of a collection request needs (the request state's `collection`); not public. */
export interface CollectionState {
  readonly route: CollectionRoute
  readonly resolved: ResolvedQuery
  readonly codec: CursorCodec
  /** A POST search: its links point to the GET form of the collection. */
  readonly search: boolean
}
