import { Type, type ObjectOptions, type TSchema } from '@sinclair/typebox'
import { INT32_MAX, Nullable } from './types.js'

// The collection response envelope (conventions: "Collection response envelope"): never a
// bare array, `results` plus `paging`. Both paging shapes refuse extra properties so that
// a response offering both (`Collection`) can tell them apart, and so can the serializer.

const url = Type.String({ minLength: 1, maxLength: 8192, description: 'Complete URL of the other page, with the current limit, cursor, filters and ordering.' })
const limit = Type.Integer({ minimum: 1, maximum: INT32_MAX, description: 'The limit actually applied.' })

/** `{ cursor, url }` of the next or previous page. */
export const CursorLink = Type.Object({
  cursor: Type.String({ minLength: 1, maxLength: 2048, description: 'Opaque Base64 cursor created by the service.' }),
  url
}, { additionalProperties: false })

export const CursorPaging = Type.Object({
  limit,
  next: Nullable(CursorLink, { description: 'The next page; null on the last page.' }),
  previous: Nullable(CursorLink, { description: 'The previous page; null on the first page.' })
}, { additionalProperties: false })

/** `{ url }` of the next or previous page. */
export const OffsetLink = Type.Object({ url }, { additionalProperties: false })

export const OffsetPaging = Type.Object({
  totalCount: Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX })),
  limit,
  offset: Type.Integer({ minimum: 0, maximum: INT32_MAX }),
  next: Type.Optional(Nullable(OffsetLink)),
  previous: Type.Optional(Nullable(OffsetLink))
}, { additionalProperties: false })

/** A page of `item` with cursor paging, the paging every collection endpoint offers. */
export function CursorCollection<T extends TSchema> (item: T, options: ObjectOptions = {}) {
  return Type.Object({ results: Type.Array(item), paging: CursorPaging }, options)
}

/** A page of `item` with offset paging. */
export function OffsetCollection<T extends TSchema> (item: T, options: ObjectOptions = {}) {
  return Type.Object({ results: Type.Array(item), paging: OffsetPaging }, options)
}

/** A page of `item` for an endpoint that offers both kinds of paging. */
export function Collection<T extends TSchema> (item: T, options: ObjectOptions = {}) {
  return Type.Object({ results: Type.Array(item), paging: Type.Union([CursorPaging, OffsetPaging]) }, options)
}
