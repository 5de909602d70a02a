// Media types: "Custom types take the form application/vnd.svc-<name>+json or +xml. An
// optional version is written application/vnd.svc-<name>.v<n>+json."
const SVC_TYPE = /^application\/vnd\.svc-[a-z0-9]+(?:-[a-z0-9]+)*(?:\.v[0-9]+)?\+(?:json|xml)$/
// Subtypes of the vendor, personal and unregistered trees (RFC 6838, section 3).
const CUSTOM_TREE = /^[a-z0-9!#$&^_.+-]+\/(?:vnd\.|prs\.|x\.|x-)/
// Registered long ago with an x- name (RFC 6838, section 3.4 keeps them).
const REGISTERED_X: ReadonlySet<string> = new Set(['application/x-www-form-urlencoded'])

/** Returns null when `mediaType` may be used, else why not. Parameters (`; charset=...`) are ignored. */
export function checkMediaType (mediaType: string): string | null {
  const type = (mediaType.split(';')[0] as string).trim().toLowerCase()
  if (!CUSTOM_TREE.test(type) || REGISTERED_X.has(type) || SVC_TYPE.test(type)) return null
  return `the custom media type ${type} is written application/vnd.svc-<name>[.v<n>]+json or +xml`
}
