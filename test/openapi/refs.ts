// Reading an OpenAPI document through its `$ref`s; no app behind it, so any test may import it.

type Doc = Record<string, any>

/** The value at a JSON pointer of the document (`#/components/schemas/Author/properties/id`). */
export function atPointer (doc: Doc, pointer: string): any {
  return pointer.slice(2).split('/').map(p => p.replace(/~1/g, '/').replace(/~0/g, '~')).reduce<any>((node, key) => node?.[key], doc)
}

/**
 * `schema` with every `$ref` into the document written out in place, the keywords beside a
 * reference (a description, a `maxLength`) kept over the referred schema's; for tests that
 * read a schema's properties, formats or patterns whatever the document shares.
 */
export function resolveRefs (doc: Doc, schema: unknown, seen: readonly string[] = []): any {
  if (Array.isArray(schema)) return schema.map(s => resolveRefs(doc, s, seen))
  if (typeof schema !== 'object' || schema === null) return schema
  const { $ref, ...rest } = schema as Doc
  const own = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, k === 'examples' || k === 'enum' || k === 'const' || k === 'default' ? v : resolveRefs(doc, v, seen)]))
  if (typeof $ref !== 'string' || !$ref.startsWith('#/') || seen.includes($ref)) return $ref === undefined ? own : { $ref, ...own }
  return { ...resolveRefs(doc, atPointer(doc, $ref), [...seen, $ref]), ...own }
}
