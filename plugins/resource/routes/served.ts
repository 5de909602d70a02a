import type { ResourceTable } from '../../../store/table/index.js'
import type { Store } from '../../../store/types.js'
import type { IdempotencyKeys } from '../../idempotency/index.js'
import type { ResourceDefinition } from '../define.js'
import type { Registry } from '../problems.js'
import type { Representation } from '../representation.js'
import type { ItemPaths } from '../paths.js'
import type { Writer } from '../write/writer.js'

/** What the routes of one served resource share, built once at registration. */
export interface Served {
  def: ResourceDefinition
  store: Store
  table: ResourceTable
  writer: Writer
  rep: Representation
  keys: IdempotencyKeys
  /** Every served definition by table, to name the children that block a delete. */
  registry: Registry
  /** Item paths under the plugin's route prefix. */
  itemPath: ItemPaths
}
