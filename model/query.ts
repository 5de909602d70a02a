/**
 * The collection query model: what a GET on a collection asks for, independent of
 * HTTP (the plugin builds it) and of storage (the SQL compiler and the in-memory
 * evaluator both consume it). Conventions: "Collection endpoints", "Simple filtering",
 * "Advanced filtering", "Hybrid filtering", "Sorting".
 */

/** The types a filterable or sortable path can have (conventions: "Serialization rules by type"). */
export type FieldType =
  | 'string'
  | 'int32'
  | 'int64'
  | 'decimal'
  | 'date'
  | 'date-time'
  | 'boolean'
  | 'enum'
  | 'string-array'

/** One filterable and/or sortable path of a resource, as the resource layer describes it. */
export interface FieldDescriptor {
  /** API path with periods, at most three levels (`name`, `metadata.source.system`). */
  readonly path: string
  readonly type: FieldType
  /** Allowed values of an `enum` field. */
  readonly enumValues?: readonly string[]
  /** Whether the value can be null (nullable, optional or under a nullable object). */
  readonly nullable: boolean
  /** Accepted in simple, hybrid and advanced filters. */
  readonly filterable: boolean
  /** Accepted in `ordering`. */
  readonly sortable: boolean
  /**
   * Whether the values have the order of their type: false for text whose text order
   * means nothing (an ISO 8601 duration, an interval, a cron schedule: `P1Y` sorts before
   * `P2D`), where range operators are refused and ordering is not allowed.
   */
  readonly ordered: boolean
}

/**
 * The field map of one resource, keyed by path. Where a path is stored is the store's
 * business (store/field-columns.ts): the map says only what a query may name.
 */
export type FieldMap = ReadonlyMap<string, FieldDescriptor>

/** Comparison operators of the filter AST (conventions: "Advanced filtering"). */
export type ComparisonOp =
  | 'eq'
  | 'ne'
  | 'lt'
  | 'le'
  | 'gt'
  | 'ge'
  | 'in'
  | 'out'
  | 'isnull'
  | 'contains'
  | 'startswith'
  | 'endswith'
  | 'like'
  | 'notlike'

/**
 * A typed value: strings for string, enum, int64 and decimal (exact), date
 * (`YYYY-MM-DD`) and date-time (ISO 8601 UTC); numbers for int32; booleans.
 */
export type Scalar = string | number | boolean

/**
 * A wildcard pattern: the literal segments between `*` wildcards, in order.
 * `a*b*` is `['a', 'b', '']`; a pattern without wildcard has one segment.
 */
export interface Wildcard {
  readonly wildcard: readonly string[]
}

export type Operand = Scalar | Wildcard

/**
 * One comparison. The shape of `values` depends on `op`:
 * - `eq`, `ne`: one Scalar, or one Wildcard (string fields only; at least one `*`);
 *   on a `string-array` field, containment of the one string;
 * - `lt`, `le`, `gt`, `ge`: one Scalar;
 * - `in`, `out`: one or more Scalars (on a `string-array`: contains any / none);
 * - `isnull`: one boolean;
 * - `contains`, `startswith`, `endswith`: one string;
 * - `like`, `notlike`: one Wildcard.
 * `ci` is true for the case-insensitive string operators (`=containsic=` …).
 */
export interface Comparison {
  readonly kind: 'cmp'
  readonly field: string
  readonly op: ComparisonOp
  readonly values: readonly Operand[]
  readonly ci: boolean
}

export interface Junction {
  readonly kind: 'and' | 'or'
  /** Two or more children; never a junction of the same kind (they are flattened). */
  readonly children: readonly Filter[]
}

export type Filter = Comparison | Junction

export type Direction = 'asc' | 'desc'

/** One ordering key. Nulls sort as greater than every value (PostgreSQL's default). */
export interface OrderingTerm {
  readonly field: string
  readonly direction: Direction
}

/** A sort-key value of a boundary item, as the API shapes it (int64/decimal/dates as strings). */
export type KeyValue = string | number | boolean | null

/** A keyset position: the sort-key values of a boundary item and which way to go from it. */
export interface Keyset {
  readonly direction: 'next' | 'previous'
  readonly values: readonly KeyValue[]
}

export type Paging =
  | { readonly kind: 'cursor', readonly limit: number, readonly cursor?: Keyset }
  | { readonly kind: 'offset', readonly limit: number, readonly offset: number, readonly totalCount: boolean }

/** Everything a collection request asks for. `ordering` always ends with the id. */
export interface CollectionQuery {
  readonly filter: Filter | null
  readonly ordering: readonly OrderingTerm[]
  readonly paging: Paging
}

/** One page, whichever back end produced it. */
export interface Page<T> {
  readonly items: T[]
  readonly hasNext: boolean
  readonly hasPrevious: boolean
  /** Keyset of the next page (cursor paging, when there is one). */
  readonly next: Keyset | null
  /** Keyset of the previous page (cursor paging, when there is one). */
  readonly previous: Keyset | null
  /** The number of items the filter matches, when the paging asks for it (offset paging with `totalCount`). */
  readonly totalCount?: number
}

export function isWildcard (value: Operand): value is Wildcard {
  return typeof value === 'object'
}

/**
 * Joins filters with AND or OR, flattening same-kind junctions and dropping the
 * junction around a single child, so equal filters have equal shapes.
 */
export function junction (kind: 'and' | 'or', parts: readonly Filter[]): Filter | null {
  const children: Filter[] = []
  for (const part of parts) {
    if (part.kind === kind) children.push(...part.children)
    else children.push(part)
  }
  if (children.length === 0) return null
  if (children.length === 1) return children[0] as Filter
  return { kind, children }
}

/** Whether the filter compares `path` anywhere (a soft-deleted entity is listed only when asked for by its deletion). */
export function filtersOn (filter: Filter | null, path: string): boolean {
  if (filter === null) return false
  if (filter.kind === 'cmp') return filter.field === path
  return filter.children.some((child) => filtersOn(child, path))
}
