// The public entry of the suite: every plugin with its typed options, the schema builders
// and the problem API. Each plugin works alone in any Fastify 5 server.
export { default as problem } from './plugins/problem/index.js'
export type { ProblemPluginOptions } from './plugins/problem/index.js'
export { ProblemError, problems, defineProblem, invalidData, contextItem, isProblemError, contextFromAjv, fieldFromPointer, STATUS_TITLES, problemFrameworkErrors, problemClientErrorHandler, problemServerOptions, sentRequestId, MAX_REQUEST_ID_LENGTH } from './plugins/problem/index.js'

export { default as validation } from './plugins/validation/index.js'
export type { ValidationPluginOptions } from './plugins/validation/index.js'

export { default as methods } from './plugins/methods/index.js'
export type { MethodsPluginOptions } from './plugins/methods/index.js'

export { default as conventions } from './plugins/conventions/index.js'
export * from './plugins/conventions/index.js'

export { default as cors } from './plugins/cors/index.js'
export type { CorsPluginOptions } from './plugins/cors/index.js'
export { DEFAULT_METHODS, DEFAULT_ALLOWED_HEADERS, DEFAULT_EXPOSED_HEADERS } from './plugins/cors/index.js'

export { default as auth } from './plugins/auth/index.js'
export type { AuthPluginOptions, AuthRouteConfig } from './plugins/auth/index.js'
export * from './plugins/auth/index.js'

export { default as openapi } from './plugins/openapi/index.js'
export { default as docs } from './plugins/docs/index.js'
export type { OpenApiPluginOptions } from './plugins/openapi/index.js'

export * from './schemas/index.js'

export { default as resource } from './plugins/resource/index.js'
export * from './plugins/resource/index.js'

export { default as conditional } from './plugins/conditional/index.js'
export * from './plugins/conditional/index.js'

export { default as idempotency } from './plugins/idempotency/index.js'
export * from './plugins/idempotency/index.js'

export * from './store/index.js'

export { default as query } from './plugins/query/index.js'
export * from './plugins/query/index.js'
export { default as csv } from './plugins/csv/index.js'
export type { CsvPluginOptions, CsvRouteConfig, Column as CsvColumn } from './plugins/csv/index.js'
export { columnsOf as csvColumnsOf, writeCsv, CSV_MEDIA_TYPE, CSV_CONTENT_TYPE } from './plugins/csv/index.js'
export { compileSql, selectStatement } from './store/sql-query.js'
export { defaultColumn, defaultColumns, type FieldColumns } from './store/field-columns.js'
export { finishPage } from './store/finish-page.js'
export { readPage, type ReadPageOptions, type RowSource } from './store/read-page.js'
export { queryMemory } from './store/memory-query.js'

export { default as webhooks } from './plugins/webhooks/index.js'
export * from './plugins/webhooks/index.js'

export { default as rateLimit } from './plugins/rate-limit/index.js'
export * from './plugins/rate-limit/index.js'

export { default as jobs } from './plugins/jobs/index.js'
export * from './plugins/jobs/index.js'

export { default as bulk } from './plugins/bulk/index.js'
export * from './plugins/bulk/index.js'

export { default as downstream } from './plugins/downstream/index.js'
export * from './plugins/downstream/index.js'
export { default as files } from './plugins/files/index.js'
export { FileDescription, dispositionOf, type FilesPluginOptions, type FileEndpointOptions } from './plugins/files/index.js'
export { default as events } from './plugins/events/index.js'
export * from './plugins/events/index.js'

export { default as lint } from './plugins/lint/index.js'
export type { LintPluginOptions, RuleId, RuleSwitches, Violation } from './plugins/lint/index.js'
export { lintSchema, lintOpenApi, lintRouteSchema, lintRouteConfig, formatReport, formatJson, countByRule, RULE_IDS } from './plugins/lint/index.js'
