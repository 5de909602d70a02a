import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

// The runtime names of the package's root and of each subpath, pinned: each one is a promise to
// adopters from the first publish on, so adding, moving or removing one shows here, in review.
// The root holds the plugins, the problem API, the schema builders, createStore and
// defineResource; the rest is on the subpaths (CHANGELOG, docs/install.md). Types are checked by
// tsc over the examples and by the packed-install test.

const root = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, string>> }

const expected: Record<string, string[]> = {
  'svc-conventions': [
    'Collection', 'CronSchedule', 'CursorCollection', 'DateOnly', 'DateTime', 'Decimal', 'Duration',
    'FileDescription', 'Id', 'Int32', 'Int64', 'Interval', 'Nullable', 'OffsetCollection', 'Percentage',
    'ProblemError', 'Quantity', 'QuantityFields', 'Ref', 'UpperSnakeEnum', 'auditProperties', 'auth', 'bulk',
    'conditional', 'conventions', 'cors', 'createStore', 'csv', 'defineResource', 'docs', 'downstream',
    'events', 'files', 'idempotency', 'jobs', 'lint', 'methods', 'openapi', 'problem', 'problemServerOptions',
    'problems', 'query', 'rateLimit', 'resource', 'standardProperties', 'validation', 'webhooks'
  ],
  'svc-conventions/problem': [
    'DEFAULT_REQUEST_ID_HEADER', 'MAX_CONTEXT_ITEMS', 'MAX_REQUEST_ID_LENGTH', 'ProblemError', 'ROOT_FIELD', 'STATUS_TITLES',
    'contextFromAjv', 'contextItem', 'default', 'defineProblem', 'fieldFromPointer', 'invalidData', 'invalidDetail', 'isCredentialField',
    'isProblemError', 'problemClientErrorHandler', 'problemFrameworkErrors', 'problemServerOptions',
    'problems', 'requestIdSettingsOf', 'sentRequestId', 'unavailableProblem'
  ],
  'svc-conventions/validation': [
    'default', 'refusingNul'
  ],
  'svc-conventions/conventions': [
    'STANDARD_HEADERS', 'checkCustomHeaderName', 'declaredHeaderNames', 'default', 'essenceOf',
    'formatServiceHeader', 'httpVersionNotSupported', 'isValidUserAgent', 'negotiate', 'parseAccept',
    'parseIdempotencyKey', 'parseMediaType', 'parseServiceHeader', 'parseUserAgent', 'qualityOf'
  ],
  'svc-conventions/cors': [
    'DEFAULT_ALLOWED_HEADERS', 'DEFAULT_EXPOSED_HEADERS', 'DEFAULT_METHODS', 'default'
  ],
  'svc-conventions/methods': [
    'default'
  ],
  'svc-conventions/auth': [
    'default', 'principalFromClaims', 'redisRefusalCounts', 'signToken'
  ],
  'svc-conventions/openapi': [
    'default'
  ],
  'svc-conventions/docs': [
    'default', 'operationsSorter', 'tagsSorter'
  ],
  'svc-conventions/query': [
    'buildEnvelope', 'collectionQueryOf', 'createFieldMap', 'default', 'fieldsFromSchema', 'parseFiql',
    'queryMemory', 'registerCollection'
  ],
  'svc-conventions/csv': [
    'CSV_CONTENT_TYPE', 'CSV_MEDIA_TYPE', 'columnsOf', 'default', 'writeCsv'
  ],
  'svc-conventions/conditional': [
    'default', 'evaluatePreconditions', 'evaluateRead', 'notModified', 'opaqueTags', 'parseEntityTags',
    'parseHttpDate', 'parsePreconditions', 'preconditionProblem', 'strongMatch', 'strongTags', 'weakMatch', 'writableTags'
  ],
  'svc-conventions/idempotency': [
    'HELD', 'claimOf', 'claimed', 'claimedInWrite', 'default', 'fingerprintOf', 'replayStatus'
  ],
  'svc-conventions/resource': [
    'default', 'defineResource', 'dependencyOrder'
  ],
  'svc-conventions/files': [
    'FileDescription', 'default', 'dispositionOf'
  ],
  'svc-conventions/bulk': [
    'BULK_JOB', 'default'
  ],
  'svc-conventions/jobs': [
    'Job', 'JobCollection', 'JobSummary', 'default'
  ],
  'svc-conventions/webhooks': [
    'WEBHOOK_PREFIX', 'default', 'registerWebhook', 'sharedToken', 'signStandardWebhook', 'standardWebhooks'
  ],
  'svc-conventions/rate-limit': [
    'default', 'formatDuration', 'parseDuration'
  ],
  'svc-conventions/downstream': [
    'DownstreamConnectionError', 'DownstreamError', 'DownstreamInvalidJsonError', 'DownstreamProblemError', 'DownstreamResponseError',
    'DownstreamTimeoutError', 'DownstreamTooLargeError', 'backoff', 'createDownstream', 'default',
    'retryAfter'
  ],
  'svc-conventions/lint': [
    'RULES', 'RULE_IDS', 'countByRule', 'default', 'formatJson', 'formatReport', 'lintOpenApi',
    'lintRouteConfig', 'lintRouteSchema', 'lintSchema'
  ],
  'svc-conventions/store': [
    'CheckViolation', 'ConnectionTimeout', 'ConstraintViolation', 'DataDirInUse', 'ForeignKeyViolation', 'LOCK_FILE',
    'MIGRATION_FILE', 'MigrationFailed', 'NotNullViolation', 'Purge', 'RefusalCounts', 'SchemaMismatch',
    'SerializationFailure', 'StatementTimeout', 'StoreError', 'TransactionAborted', 'Unavailable',
    'UniqueViolation', 'appliedMigrations', 'applyMigrationFiles', 'compareTables', 'createStore',
    'defaultColumn', 'defaultColumns', 'evolveTables', 'isStoreError', 'migrate', 'migrationSlug', 'migrationText',
    'previewTables', 'quoteIdent', 'readChildPage', 'readMigrationFiles', 'readPage', 'storeLocation', 'writeMigrationFile'
  ],
  'svc-conventions/schemas': [
    'BULK_ACTIONS', 'BulkAction', 'BulkContextItem', 'BulkOperation', 'BulkOperationResult',
    'BulkOperationStatus', 'BulkRequest', 'BulkRequestOf', 'BulkResponse', 'BulkStatus', 'CRON_FIELDS',
    'Collection', 'ContextItem', 'CronSchedule', 'CursorCollection', 'CursorLink', 'CursorPaging',
    'DEFAULT_MAX_OPERATIONS', 'DEFAULT_NAMESPACE', 'DateOnly', 'DateTime', 'Decimal', 'Duration',
    'ENTITY_TAGS_PATTERN', 'ID_PATTERN', 'INT32_MAX', 'INT32_MIN', 'INT64_MAX', 'INT64_MIN', 'Id', 'Int32',
    'Int64', 'Interval', 'Nullable', 'OffsetCollection', 'OffsetLink', 'OffsetPaging', 'PROBLEM_MEDIA_TYPE',
    'Percentage', 'Problem', 'Quantity', 'QuantityFields', 'REF_MAX_LENGTH', 'Ref', 'TransactionMode',
    'UPPER_SNAKE_PATTERN', 'UpperSnakeEnum', 'addConventionFormats', 'addDecimalKeywords', 'auditProperties',
    'compareDate', 'compareDateTime', 'compareDecimal', 'conventionAjvPlugin', 'conventionFormats',
    'dateTimeKey', 'daysInMonth', 'decimalKeywords', 'describeFormat', 'formatRef', 'isCron', 'isDate',
    'isDateTime', 'isDecimal', 'isDuration', 'isIdentifier', 'isInt64', 'isInterval', 'isLeapYear', 'isRef',
    'isRefEntity', 'isRefNamespace', 'parseDecimal', 'parseRef', 'standardProperties'
  ],
  'svc-conventions/check': [
    'CheckError', 'RULES', 'USER_AGENT', 'check', 'formatJson', 'formatJunit', 'formatTap', 'formatText', 'ruleOf'
  ],
  'svc-conventions/events': [
    'DEFAULT_RETRY_SCHEDULE', 'Delivery', 'DeliveryCollection', 'Subscription', 'SubscriptionCreate',
    'SubscriptionPatch', 'default', 'parseRetrySchedule'
  ]

}

t.test('every entry of package.json "exports" exports the names pinned here, and only those', async t => {
  const entries = Object.entries(pkg.exports).filter((e): e is [string, Record<string, string>] => typeof e[1] === 'object')
  t.strictSame(entries.map(([key]) => key === '.' ? 'svc-conventions' : `svc-conventions/${key.slice(2)}`).sort(), Object.keys(expected).sort(), 'the entries pinned are the package\'s')
  for (const [key, target] of entries) {
    const name = key === '.' ? 'svc-conventions' : `svc-conventions/${key.slice(2)}`
    const source = target['svc-conventions-source'] as string
    const mod = await import(pathToFileURL(join(root, source)).href) as Record<string, unknown>
    t.strictSame(Object.keys(mod).sort(), expected[name], name)
  }
})

t.test('no entry exports the store\'s tables or the writer', async t => {
  for (const [entry, names] of Object.entries(expected)) {
    if (entry === 'svc-conventions/store') continue
    for (const internal of ['Writer', 'JobTable', 'EventTables', 'WebhookDeliveries', 'IdempotencyKeys', 'ResourceTable']) t.notOk(names.includes(internal), `${entry}: ${internal}`)
  }
})

t.test('the root exports no store or SQL internals', async t => {
  const names = expected['svc-conventions'] as string[]
  for (const internal of ['compileSql', 'selectStatement', 'readPage', 'readChildPage', 'finishPage', 'defaultColumn', 'queryMemory', 'Writer', 'JobTable', 'EventTables', 'quoteIdent']) {
    t.notOk(names.includes(internal), internal)
  }
})
