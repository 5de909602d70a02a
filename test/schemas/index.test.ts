import t from 'tap'
import * as schemas from '../../schemas/index.js'

t.test('schemas/index re-exports the builders, envelopes, formats and validators', async t => {
  const expected = [
    'Problem', 'ContextItem', 'PROBLEM_MEDIA_TYPE',
    'conventionFormats', 'describeFormat', 'addConventionFormats', 'conventionAjvPlugin', 'addDecimalKeywords', 'decimalKeywords',
    'DateTime', 'DateOnly', 'Decimal', 'Percentage', 'Int32', 'Int64', 'Duration', 'Interval', 'CronSchedule', 'UpperSnakeEnum',
    'Quantity', 'QuantityFields', 'Ref', 'Id', 'Nullable', 'INT32_MIN', 'INT32_MAX', 'ID_PATTERN',
    'standardProperties', 'auditProperties',
    'CursorPaging', 'OffsetPaging', 'CursorLink', 'OffsetLink', 'CursorCollection', 'OffsetCollection', 'Collection',
    'BulkAction', 'TransactionMode', 'BulkStatus', 'BulkOperationStatus', 'BulkRequest', 'BulkResponse', 'BulkOperationResult', 'BulkContextItem', 'BULK_ACTIONS',
    'isDate', 'isDateTime', 'compareDate', 'compareDateTime', 'isDecimal', 'parseDecimal', 'compareDecimal', 'isInt64',
    'isDuration', 'isInterval', 'isCron', 'isRef', 'parseRef', 'formatRef', 'INT64_MIN', 'INT64_MAX'
  ]
  for (const name of expected) t.not((schemas as Record<string, unknown>)[name], undefined, name)
  t.equal(schemas.isDuration('P1D'), true)
  t.equal((schemas as Record<string, unknown>).isDigit, undefined, 'character helpers stay internal')
})
