type Json = Record<string, unknown>

function isObject (value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * JSON Merge Patch, RFC 7396 §2: an object patch merges member by member (`null` removes
 * the member, an object recurses), anything else (an array, a scalar, null) replaces the
 * target whole. Returns a new value; neither argument is changed.
 */
export function mergePatch (target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch
  const out: Json = isObject(target) ? { ...target } : {}
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete out[name]
    else out[name] = mergePatch(out[name], value)
  }
  return out
}
