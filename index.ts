// The public entry of the suite: every plugin with its option and route-config types, the
// problem API, the schema builders, createStore and defineResource. Each plugin works alone
// in any Fastify 5 server. What adopters need beyond these is on the named subpaths
// (`svc-conventions/store`, `svc-conventions/query`, …: package.json "exports"); each name
// here is a promise kept across minor versions, pinned by test/package/exports.test.ts.

export { default as problem, problems, ProblemError, problemServerOptions } from './plugins/problem/index.js'
export type { ProblemPluginOptions } from './plugins/problem/index.js'

export { default as validation } from './plugins/validation/index.js'
export type { ValidationPluginOptions } from './plugins/validation/index.js'

export { default as methods } from './plugins/methods/index.js'
export type { MethodsPluginOptions } from './plugins/methods/index.js'

export { default as conventions } from './plugins/conventions/index.js'
export type { ConventionsOptions, ConventionsRouteConfig, UserAgentOptions, ExecutionContextOptions, ServiceHeaderOptions } from './plugins/conventions/index.js'

export { default as cors } from './plugins/cors/index.js'
export type { CorsPluginOptions } from './plugins/cors/index.js'

export { default as auth } from './plugins/auth/index.js'
export type { AuthPluginOptions, AuthRouteConfig, SecretVerifierOptions, JwksVerifierOptions } from './plugins/auth/index.js'

export { default as rateLimit } from './plugins/rate-limit/index.js'
export type { RateLimitPluginOptions, RateLimitRouteConfig } from './plugins/rate-limit/index.js'

export { default as openapi } from './plugins/openapi/index.js'
export type { OpenApiPluginOptions } from './plugins/openapi/index.js'

export { default as docs } from './plugins/docs/index.js'
export type { DocsPluginOptions } from './plugins/docs/index.js'

export { default as query } from './plugins/query/index.js'
export type { QueryPluginOptions, CollectionConfig } from './plugins/query/index.js'

export { default as csv } from './plugins/csv/index.js'
export type { CsvPluginOptions, CsvRouteConfig } from './plugins/csv/index.js'

export { default as conditional } from './plugins/conditional/index.js'
export type { ConditionalPluginOptions, ConditionalRouteConfig } from './plugins/conditional/index.js'

export { default as idempotency } from './plugins/idempotency/index.js'
export type { IdempotencyPluginOptions } from './plugins/idempotency/index.js'

export { default as resource, defineResource } from './plugins/resource/index.js'
export type { ResourcePluginOptions, ResourceOptions, ResourceDefinition, ReferenceOptions, ParentOptions, IndexOptions, ServedResource } from './plugins/resource/index.js'

export { default as bulk } from './plugins/bulk/index.js'
export type { BulkPluginOptions, BulkEndpointOptions } from './plugins/bulk/index.js'

export { default as files, FileDescription } from './plugins/files/index.js'
export type { FilesPluginOptions, FileEndpointOptions } from './plugins/files/index.js'

export { default as jobs } from './plugins/jobs/index.js'
export type { JobsPluginOptions, JobHandler } from './plugins/jobs/index.js'

export { default as webhooks } from './plugins/webhooks/index.js'
export type { WebhooksPluginOptions } from './plugins/webhooks/index.js'

export { default as events } from './plugins/events/index.js'
export type { EventsPluginOptions } from './plugins/events/index.js'

export { default as downstream } from './plugins/downstream/index.js'
export type { DownstreamOptions, RetryOptions } from './plugins/downstream/index.js'

export { default as lint } from './plugins/lint/index.js'
export type { LintPluginOptions } from './plugins/lint/index.js'

// The schema builders of the convention's types and envelopes; constants, formats, validators
// and the bulk and problem schemas are on `svc-conventions/schemas`.
export {
  CronSchedule, DateOnly, DateTime, Decimal, Duration, Id, Int32, Int64, Interval, Nullable,
  Percentage, Quantity, QuantityFields, Ref, UpperSnakeEnum
} from './schemas/types.js'
export type { DecimalOptions } from './schemas/types.js'
export { auditProperties, standardProperties } from './schemas/standard.js'
export { Collection, CursorCollection, OffsetCollection } from './schemas/collection.js'

export { createStore } from './store/index.js'
export type { Store, StoreOptions, PoolOptions, StoreKind, StoreLogger, Tx, Queryable, QueryResult, TransactionOptions, IsolationLevel, Migration } from './store/index.js'
