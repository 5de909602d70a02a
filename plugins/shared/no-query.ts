import { Type } from '@sinclair/typebox'

/**
 * The query of item routes and writes: none. One sent (`DELETE …?name=x`) is refused, not
 * ignored, so no client believes it filtered or narrowed anything (conventions: Simple
 * filtering 9, "Filters apply to GET only").
 */
export const NoQuery = Type.Object({}, { additionalProperties: false })
