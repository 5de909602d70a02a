import { Type } from '@sinclair/typebox'
import { createFieldMap } from '../../model/fields.js'

/** A document-like resource covering every field type, nullable and not, nested and not. */
export const STATUSES = ['DRAFT', 'PUBLISHED', 'ARCHIVED']

export const fields = createFieldMap([
  { path: 'id', type: 'string', sortable: true },
  { path: 'name', type: 'string', sortable: true },
  { path: 'description', type: 'string', nullable: true },
  { path: 'status', type: 'enum', enumValues: STATUSES, sortable: true },
  { path: 'pageCount', type: 'int32', nullable: true, sortable: true },
  { path: 'byteCount', type: 'int64', nullable: true, sortable: true },
  { path: 'amount', type: 'decimal', nullable: true, sortable: true },
  { path: 'effectiveDate', type: 'date', nullable: true, sortable: true },
  { path: 'publishedDateTime', type: 'date-time', nullable: true, sortable: true },
  { path: 'active', type: 'boolean', sortable: true },
  { path: 'flagged', type: 'boolean', nullable: true, sortable: true },
  { path: 'tags', type: 'string-array' },
  { path: 'metadata.source.system', type: 'string', nullable: true, sortable: true },
  { path: 'metadata.source.region', type: 'string', nullable: true },
  { path: 'metadata.score', type: 'int32', nullable: true, sortable: true }
])

/** The TypeBox schema fieldsFromSchema turns into `fields`. */
export const DocumentSchema = Type.Object({
  id: Type.String(),
  name: Type.String({ minLength: 1 }),
  description: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union(STATUSES.map((s) => Type.Literal(s))),
  pageCount: Type.Union([Type.Integer(), Type.Null()]),
  byteCount: Type.Union([Type.String({ format: 'int64' }), Type.Null()]),
  amount: Type.Union([Type.String({ format: 'decimal' }), Type.Null()]),
  effectiveDate: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
  publishedDateTime: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  active: Type.Boolean(),
  flagged: Type.Union([Type.Boolean(), Type.Null()]),
  tags: Type.Array(Type.String()),
  metadata: Type.Union([Type.Object({
    source: Type.Union([Type.Object({
      system: Type.String(),
      region: Type.Union([Type.String(), Type.Null()])
    }), Type.Null()]),
    score: Type.Optional(Type.Integer())
  }), Type.Null()])
})

export const SORTABLE = ['id', 'name', 'status', 'pageCount', 'byteCount', 'amount', 'effectiveDate', 'publishedDateTime', 'active', 'flagged', 'metadata.source.system', 'metadata.score']
