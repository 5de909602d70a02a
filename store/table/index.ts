// A resource table: its columns, its DDL and migration, and every statement run on it.
export { DELETED_COLUMNS, DELETED_FIELDS, SERVER_COLUMNS, SERVER_FIELDS, columnOf, kindOf, unwrapNullable, rowDecoder, type Column, type FieldKind } from './columns.js'
export { constraintNames, indexKey, NOT_DELETED, tableDdl, tableMigration, indexDdl, collationDdl, type IndexKey, type TableIndex, type TableSpec } from './schema.js'
export { ResourceTable, type RowWrite, type TableWrite, type WriteOutcome, type WriteStatement, type WriteScope, type PageScope } from './statements.js'
export type { Guard, Returning, WriteKind } from './write-statement.js'
