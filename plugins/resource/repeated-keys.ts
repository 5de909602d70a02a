import type { ContextItem } from '../../schemas/problem.js'
import type { ResourceDefinition } from './definition/types.js'
import { upperSnake } from './problems.js'

/**
 * The items of a sub-collection whose key repeats an earlier item's, one context item each,
 * the item named by `fieldOf(i)`. Its key identifies an item of the sub-collection, orders it
 * and carries its cursor: two items with one key would make a page of it skip one of them.
 */
export function repeatedKeyItems (items: readonly unknown[], key: string, fieldOf: (i: number) => string): ContextItem[] {
  const seen = new Map<unknown, number>()
  const repeated: ContextItem[] = []
  items.forEach((item, i) => {
    const value = (item as Record<string, unknown>)[key]
    const first = seen.get(value)
    if (first === undefined) seen.set(value, i)
    else repeated.push({ code: `DUPLICATE_${upperSnake(key)}`, message: `repeats the ${key} of ${fieldOf(first)}; each ${key} appears once`, field: `${fieldOf(i)}.${key}`, source: 'body', value: String(value) })
  })
  return repeated
}

/**
 * `repeatedKeyItems` of every sub-collection `values` gives (an entity, or a merge patch,
 * whose arrays replace the stored ones whole), fields under `prefix` (`''`, or
 * `operations[2].entity.` in a bulk request). Called once the values passed their schema.
 */
export function repeatedSubCollectionKeys (def: ResourceDefinition, values: Record<string, unknown>, prefix: string): ContextItem[] {
  const found: ContextItem[] = []
  for (const sub of def.api.subCollections) {
    const items = values[sub.field]
    if (Array.isArray(items)) found.push(...repeatedKeyItems(items, sub.key, (i) => `${prefix}${sub.field}[${i}]`))
  }
  return found
}

/** The 400's detail for `repeatedSubCollectionKeys`' items. */
export function repeatedKeysDetail (def: ResourceDefinition, items: readonly ContextItem[]): string {
  const subs = def.api.subCollections.filter(sub => items.some(item => item.field?.includes(`${sub.field}[`) === true))
  return `${subs.map(sub => `Each ${sub.key} appears once among the ${sub.field}`).join('; ')}; see context for each repeated one.`
}
