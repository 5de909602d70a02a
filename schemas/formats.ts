import type { Ajv, Plugin } from 'ajv'
import addStandardFormats from 'ajv-formats'
import { addDecimalKeywords } from './keywords.js'
import { compareDate, compareDateTime, isDate, isDateTime } from './validators/date-time.js'
import { isDecimal, isInt64 } from './validators/number.js'
import { isDuration } from './validators/duration.js'
import { isInterval } from './validators/interval.js'
import { isCron } from './validators/cron.js'
import { isRef } from './validators/ref.js'

export interface FormatDefinition {
  validate: (value: string) => boolean
  /** A short phrase that follows "must be" in an error message. */
  description: string
  /** Orders two values, for ajv-formats' `formatMinimum`/`formatMaximum`; `undefined` when one is invalid. */
  compare?: (a: string, b: string) => number | undefined
}

export type ConventionFormatName = 'date-time' | 'date' | 'decimal' | 'int64' | 'duration' | 'interval' | 'cron' | 'svc-ref'

/**
 * The convention's types as Ajv formats (conventions: "Serialization rules by type",
 * "URN-like references"). Each validator is a single linear pass, never a backtracking
 * regular expression. `date-time`, `date` and `duration` replace ajv-formats' looser ones.
 */
export const conventionFormats: Readonly<Record<ConventionFormatName, FormatDefinition>> = {
  'date-time': {
    validate: isDateTime,
    compare: (a, b) => isDateTime(a) && isDateTime(b) ? compareDateTime(a, b) : undefined,
    description: 'a UTC date-time like 2024-05-01T12:00:00.000Z'
  },
  date: {
    validate: isDate,
    compare: (a, b) => isDate(a) && isDate(b) ? compareDate(a, b) : undefined,
    description: 'a calendar date like 2024-05-01'
  },
  decimal: { validate: isDecimal, description: 'a decimal number written as a string, like "-12.50"' },
  int64: { validate: isInt64, description: 'a 64-bit integer written as a string, like "9007199254740993"' },
  duration: { validate: isDuration, description: 'an ISO 8601 duration like P1Y2M10DT2H30M' },
  interval: { validate: isInterval, description: 'an ISO 8601 interval like 2024-05-01T00:00:00Z/P1D' },
  cron: { validate: isCron, description: 'a five-field cron schedule like 0 9 * * MON-FRI' },
  'svc-ref': { validate: isRef, description: 'a reference like svc:author::<id>' }
}

/** Phrases for the ajv-formats formats the convention keeps. */
const standardDescriptions: Readonly<Record<string, string>> = {
  email: 'an email address like name@example.com',
  uri: 'an absolute URI like https://example.com/path',
  'uri-reference': 'a URI reference like /v1/documents',
  uuid: 'a UUID like 123e4567-e89b-42d3-a456-426614174000'
}

/** The phrase that follows "must be" in the error message of a format. */
export function describeFormat (name: string): string {
  return (conventionFormats as Readonly<Record<string, FormatDefinition>>)[name]?.description ??
    standardDescriptions[name] ?? `a valid ${name}`
}

/** Adds the convention's formats and the decimal keywords (`decimalMinimum`, `decimalMaximum`, `decimalDigits`). */
export function addConventionFormats (ajv: Ajv): Ajv {
  for (const [name, def] of Object.entries(conventionFormats)) {
    ajv.addFormat(name, def.compare === undefined
      ? { type: 'string', validate: def.validate }
      : { type: 'string', validate: def.validate, compare: def.compare })
  }
  return addDecimalKeywords(ajv)
}

/**
 * For services that keep Fastify's own Ajv: `Fastify({ ajv: { plugins: [conventionAjvPlugin] } })`.
 * @fastify/ajv-compiler runs the plugins first and then adds ajv-formats, which would put
 * back its own date-time, date and duration, unless one plugin is named `formatsPlugin`
 * (lib/validator-compiler.js). So this plugin adds ajv-formats itself, then the convention's
 * formats over it, and carries that name.
 */
export const conventionAjvPlugin: Plugin<unknown> = function formatsPlugin (ajv: Ajv): Ajv {
  addStandardFormats.default(ajv)
  return addConventionFormats(ajv)
}
