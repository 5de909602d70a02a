import { Type, type TString } from '@sinclair/typebox'
import { DateTime, Id, Ref, type RefOptions } from './types.js'

// The convention's standard properties (conventions: "Standard properties"), as schemas
// to place in `Type.Object({...})` under the same names:
//   Type.Object({ id: standardProperties.id, ref: standardProperties.ref('author'),
//                 name: standardProperties.name, ...auditProperties })

/** Who made a change: the identifier of a user, as the token names it (not forced into the id alphabet). */
function userId (description: string): TString {
  return Type.String({ minLength: 1, maxLength: 255, readOnly: true, description })
}

export const standardProperties = {
  id: Id({ description: 'Unique identifier of the entity.' }),
  /** The self reference of an entity of kind `entity`, read-only: `svc:<entity>::<id>`. */
  ref: (entity: string, options: RefOptions = {}): TString =>
    Ref(entity, { readOnly: true, description: `URN-like reference of the ${entity}.`, ...options }),
  orgId: Id({ description: 'Identifier of the organization, typically a UUID.' }),
  orgRef: Ref('org', { description: 'URN-like reference of the organization, containing its orgId.' }),
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Official name of the entity.' }),
  description: Type.String({ minLength: 0, maxLength: 2000, description: 'Text describing the entity.' }),
  requestId: Type.String({ minLength: 1, maxLength: 255, description: 'Tracing identifier of the request.' }),
  createdDateTime: DateTime({ readOnly: true, description: 'When the entity was created.' }),
  createdBy: userId('Identifier of the user who created the entity.'),
  modifiedDateTime: DateTime({ readOnly: true, description: 'When the entity was last modified.' }),
  modifiedBy: userId('Identifier of the user who last modified the entity.'),
  deletedBy: userId('Identifier of the user who deleted the entity.'),
  fingerprint: Type.String({ minLength: 1, maxLength: 255, description: 'Hashed reference to a data context, for example a content hash.' }),
  /** Sibling of `id` on an entity or a collection item (conventions: "ETags with collections"). */
  etag: Type.String({ minLength: 1, maxLength: 255, readOnly: true, description: 'Opaque version of the entity, equal to its ETag header.' })
}

/** The read-only creation and modification stamps, to spread into an entity. */
export const auditProperties = {
  createdDateTime: standardProperties.createdDateTime,
  createdBy: standardProperties.createdBy,
  modifiedDateTime: standardProperties.modifiedDateTime,
  modifiedBy: standardProperties.modifiedBy
}
