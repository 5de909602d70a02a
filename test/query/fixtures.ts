import { Type } from '@sinclair/typebox'
import { createFieldMap, defaultColumn } from '../../model/fields.js'
import type { FieldType } from '../../model/query.js'

/** A document-like resource covering every field type, nullable and not, nested and not. */
export const STATUSES = ['DRAFT', 'PUBLISHED', 'ARCHIVED']

const sql = (path: string, type: FieldType): string => defaultColumn(path, type)

export const fields = createFieldMap([
  { path: 'id', type: 'string', sql: sql('id', 'string'), sortable: true },
  { path: 'name', type: 'string', sql: sql('name', 'string'), sortable: true },
  { path: 'description', type: 'string', nullable: true, sql: sql('description', 'string') },
  { path: 'status', type: 'enum', enumValues: STATUSES, sql: sql('status', 'enum'), sortable: true },
  { path: 'pageCount', type: 'int32', nullable: true, sql: sql('pageCount', 'int32'), sortable: true },
  { path: 'byteCount', type: 'int64', nullable: true, sql: sql('byteCount', 'int64'), sortable: true },
  { path: 'amount', type: 'decimal', nullable: true, sql: sql('amount', 'decimal'), sortable: true },
  { path: 'effectiveDate', type: 'date', nullable: true, sql: sql('effectiveDate', 'date'), sortable: true },
  { path: 'publishedDateTime', type: 'date-time', nullable: true, sql: sql('publishedDateTime', 'date-time'), sortable: true },
  { path: 'active', type: 'boolean', sql: sql('active', 'boolean'), sortable: true },
  { path: 'flagged', type: 'boolean', nullable: true, sql: sql('flagged', 'boolean'), sortable: true },
  { path: 'tags', type: 'string-array', sql: sql('tags', 'string-array') },
  { path: 'metadata.source.system', type: 'string', nullable: true, sql: sql('metadata.source.system', 'string'), sortable: true },
  { path: 'metadata.source.region', type: 'string', nullable: true, sql: sql('metadata.source.region', 'string') },
  { path: 'metadata.score', type: 'int32', nullable: true, sql: sql('metadata.score', 'int32'), sortable: true }
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
