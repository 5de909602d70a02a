import { Type, type Static } from '@sinclair/typebox'
import { defineResource } from '../../index.js'

/** Authors of the reference service (reference-service.md, Resources: Author). */
export const authors = defineResource({
  name: 'author',
  collection: 'authors',
  path: '/v1/authors',
  idParam: 'authorId',
  fields: {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Official name of the author.' }),
    email: Type.String({ format: 'email', minLength: 3, maxLength: 254, description: 'Email address of the author.' }),
    active: Type.Boolean({ default: true, description: 'Whether the author is active.' })
  },
  // Authors accept If-Match but do not require it.
  requireIfMatch: false,
  scopes: { read: ['authors:read'], write: ['authors:write'] },
  // Every scalar field of the summary (reference contract: Collections).
  filterable: ['id', 'ref', 'name', 'email', 'active', 'createdDateTime', 'modifiedDateTime', 'createdBy', 'modifiedBy', 'etag'],
  sortable: ['name', 'email', 'active', 'createdDateTime', 'modifiedDateTime'],
  // (ctx, name, id): ordering=name and name filters. The default ordering, creation order, gets its own by itself.
  indexes: [['name']]
})

export type Author = Static<typeof authors.api.entity>
