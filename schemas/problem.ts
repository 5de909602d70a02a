import { Type, type Static } from '@sinclair/typebox'

/** One item of a problem's `context` (conventions: Error object, Context item). */
export const ContextItem = Type.Object({
  code: Type.Optional(Type.String({ pattern: '^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$', maxLength: 100 })),
  message: Type.String({ minLength: 1, maxLength: 1000 }),
  field: Type.Optional(Type.String({ maxLength: 1000 })),
  // The convention's sources; an item about a path parameter has none.
  source: Type.Optional(Type.Union([Type.Literal('body'), Type.Literal('query'), Type.Literal('header')])),
  value: Type.Optional(Type.String({ maxLength: 1000 }))
}, { $id: 'ContextItem', additionalProperties: true })
export type ContextItem = Static<typeof ContextItem>

/** The `application/problem+json` body of every 4xx and 5xx response. */
export const Problem = Type.Object({
  title: Type.String({ maxLength: 200 }),
  status: Type.Integer({ minimum: 400, maximum: 599 }),
  detail: Type.Optional(Type.String({ maxLength: 2000 })),
  instance: Type.Optional(Type.String({ maxLength: 2000 })),
  type: Type.Optional(Type.String({ format: 'uri-reference', maxLength: 2000 })),
  requestId: Type.String({ maxLength: 255 }),
  context: Type.Optional(Type.Array(ContextItem, { maxItems: 1000 }))
}, {
  $id: 'Problem',
  additionalProperties: true,
  examples: [{
    title: 'Invalid Data',
    status: 400,
    detail: 'The request has 1 invalid value; see context for each one.',
    instance: '/v1/documents',
    requestId: '6f1c2d4e-8a9b-4c3d-9e2f-1a2b3c4d5e6f',
    context: [{ code: 'INPUT_BLANK', message: 'must not be blank', field: 'name', source: 'body', value: '' }]
  }]
})
export type Problem = Static<typeof Problem>

export const PROBLEM_MEDIA_TYPE = 'application/problem+json'
