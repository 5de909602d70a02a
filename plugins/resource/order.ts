import type { ResourceDefinition } from './define.js'

/** Definitions in an order where every referenced table comes before the tables that reference it. */
export function dependencyOrder (resources: readonly ResourceDefinition[]): ResourceDefinition[] {
  const byTable = new Map(resources.map(r => [r.storage.table, r]))
  const out: ResourceDefinition[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (r: ResourceDefinition, from: string): void => {
    const s = state.get(r.storage.table)
    if (s === 'done') return
    if (s === 'visiting') throw new TypeError(`resource plugin: resources must not reference each other in a cycle, got one through ${r.collection}`)
    state.set(r.storage.table, 'visiting')
    for (const ref of r.references) {
      const target = byTable.get(ref.resource.storage.table)
      if (target === undefined) throw new TypeError(`resource plugin: resources must include ${ref.resource.collection}, which ${r.collection}.${ref.field} references (from ${from})`)
      visit(target, r.collection)
    }
    state.set(r.storage.table, 'done')
    out.push(r)
  }
  for (const r of resources) visit(r, 'resources')
  return out
}
