import { Type, type TSchema } from '@sinclair/typebox'
import { DateTime, Int64, Nullable } from '../../schemas/types.js'

/**
 * The read-only field of an entity that describes its attached file (reference contract:
 * Document content): `{ mediaType, filename, byteCount, modifiedDateTime }`, or null when none
 * is attached. Declare it among the resource's fields and `readOnly`; the files plugin sets it.
 */
export function FileDescription (options: { description?: string } = {}): TSchema {
  return Nullable(Type.Object({
    mediaType: Type.String({ minLength: 1, maxLength: 255, description: 'The media type the file was uploaded with.' }),
    filename: Nullable(Type.String({ minLength: 1, maxLength: 255, description: 'The name the file was uploaded with, if any.' })),
    byteCount: Int64({ minimum: '0', description: 'The size of the file in bytes.' }),
    modifiedDateTime: DateTime({ description: 'When the file was last uploaded.' })
  }, { additionalProperties: false }), { description: options.description ?? 'The attached file, read-only; null when none is attached.' })
}
