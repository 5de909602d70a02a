import { Type, type Static } from '@sinclair/typebox'
import {
  CronSchedule, DateOnly, DateTime, Decimal, Duration, FileDescription, Id, Int32, Int64, Interval, Nullable, Percentage, UpperSnakeEnum, defineResource
} from '../../index.js'
import { authors } from './authors.js'

/** One page of a document. */
export const Page = Type.Object({
  number: Int32({ minimum: 1, maximum: 100000, description: 'Page number, from 1.' }),
  description: Nullable(Type.String({ minLength: 0, maxLength: 2000 })),
  imageUrl: Nullable(Type.String({ format: 'uri', maxLength: 2000 }))
}, { additionalProperties: false })

/** Where a document's data came from. */
export const Metadata = Type.Object({
  source: Nullable(Type.Object({
    system: Type.String({ minLength: 1, maxLength: 50 }),
    region: Nullable(Type.String({ minLength: 1, maxLength: 50 }))
  }, { additionalProperties: false }))
}, { additionalProperties: false })

/** Documents of the reference service (reference-service.md, Resources: Document). */
export const documents = defineResource({
  name: 'document',
  collection: 'documents',
  path: '/v1/documents',
  idParam: 'documentId',
  fields: {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Official name, unique among documents.' }),
    description: Nullable(Type.String({ minLength: 0, maxLength: 2000 })),
    authorId: Id({ description: 'The author of the document.' }),
    status: UpperSnakeEnum(['DRAFT', 'PUBLISHED', 'ARCHIVED'], { default: 'DRAFT' }),
    kind: UpperSnakeEnum(['PURCHASE_ORDER', 'INVOICE', 'CONTRACT']),
    pageCount: Int32({ minimum: 0, maximum: 100000, default: 0 }),
    byteCount: Nullable(Int64({ minimum: '0' })),
    amount: Nullable(Decimal({ maxIntegerDigits: 15, maxFractionDigits: 4 })),
    discountPercentage: Nullable(Percentage()),
    tags: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20, uniqueItems: true, default: [] }),
    pages: Type.Array(Page, { maxItems: 1000, default: [] }),
    retentionDuration: Nullable(Duration()),
    validityInterval: Nullable(Interval()),
    reviewSchedule: Nullable(CronSchedule()),
    effectiveDate: Nullable(DateOnly()),
    publishedDateTime: Nullable(DateTime()),
    metadata: Nullable(Metadata),
    fingerprint: Nullable(Type.String({ minLength: 1, maxLength: 255, description: 'Content hash, set by the scanner webhook.' })),
    // Set by the files plugin (app.ts): /v1/documents/{documentId}/content.
    content: FileDescription({ description: 'The attached file (PUT /v1/documents/{documentId}/content), read-only; null when none.' })
  },
  readOnly: ['fingerprint', 'content'],
  unique: ['name'],
  references: [{ field: 'authorId', resource: authors, ref: 'authorRef' }],
  parent: { resource: authors, field: 'authorId' },
  requireIfMatch: true,
  // Reference contract, "Documents: lifecycle, soft delete, pages, content".
  softDelete: true,
  actions: {
    publish: { from: ['DRAFT'], to: 'PUBLISHED', set: { publishedDateTime: 'now' }, summary: 'Publishes a draft' },
    archive: { from: ['DRAFT', 'PUBLISHED'], to: 'ARCHIVED', summary: 'Archives a draft or a published document' }
  },
  subCollections: { pages: { key: 'number' } },
  scopes: { read: ['documents:read'], write: ['documents:write'] },
  summary: { omit: ['pages'] },
  // Every scalar field of the summary (reference contract: Collections), tags and two paths inside metadata.
  filterable: [
    'id', 'ref', 'name', 'description', 'authorId', 'authorRef', 'status', 'kind', 'pageCount', 'byteCount', 'amount', 'discountPercentage',
    'tags', 'retentionDuration', 'validityInterval', 'reviewSchedule', 'effectiveDate', 'publishedDateTime',
    'fingerprint', 'createdDateTime', 'modifiedDateTime', 'createdBy', 'modifiedBy', 'deletedDateTime', 'deletedBy', 'etag',
    'metadata.source.system', 'metadata.source.region'
  ],
  sortable: [
    'name', 'createdDateTime', 'modifiedDateTime', 'pageCount', 'amount', 'status', 'effectiveDate',
    'publishedDateTime', 'metadata.source.system'
  ],
  // Each (ctx, <fields>, id). The default ordering, creation order, gets its own by itself.
  indexes: [
    // The child collection /v1/authors/{authorId}/documents in creation order (and the foreign key).
    ['authorId', 'createdDateTime'],
    ['name'],
    ['pageCount'],
    // One status in creation order.
    ['status', 'createdDateTime'],
    // Newest first, the usual listing.
    ['-createdDateTime'],
    // One kind, largest first: kind=INVOICE&ordering=-pageCount, with any further filter.
    ['kind', '-pageCount']
  ]
})

/** The files the content of a document may be (reference contract: Document content). */
export const DOCUMENT_CONTENT_TYPES = ['application/pdf', 'image/png', 'image/jpeg', 'text/plain; charset=UTF-8', 'application/octet-stream'] as const

export type Document = Static<typeof documents.api.entity>
