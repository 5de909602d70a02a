/** The rules the linter decides, each with the convention section it enforces. */
export const RULES = {
  'property-camel-case': 'Naming rules for properties, 1: camelCase, acronyms camel-cased too',
  'identifier-name': 'Naming rules for properties, 6-7 and URN-like references: id, <entity>Id, <entity>Ref',
  'identifier-string': 'Naming rules for properties, 9: identifiers are opaque strings',
  'american-spelling': 'Naming rules for properties, 2: names are American English (color, not colour)',
  'preposition-name': 'Naming rules for properties, 3: no prepositions in names (errorReason, not reasonForError)',
  'boolean-prefix': 'Naming rules for properties, 4: no is/has prefix on booleans',
  'fingerprint-name': 'Naming rules for properties, 8: a hash or hash key is named fingerprint',
  'array-plural': 'Naming rules for properties, 5: arrays use plural names',
  'enum-upper-snake': 'Serialization rules by type, Enum: UPPER_SNAKE_CASE values',
  'integer-range': 'Serialization rules by type, Integer: explicit minimum and maximum inside int32',
  'int64-string': 'Serialization rules by type, Integer: a 64-bit integer is a string with format int64',
  'decimal-string': 'Serialization rules by type, Decimal and Percentage: strings, never JSON numbers',
  'string-max-length': 'Serialization rules by type, String: maxLength',
  'count-suffix': 'Serialization rules by type, Quantity: a count of items has the suffix Count',
  'query-json': 'Serialization rules by type: query parameter values are never serialized JSON',
  'date-time-name': 'Serialization rules by type, Date and time: names end in DateTime or Date',
  'response-root-array': 'Collection response envelope and Versioning: no bare array at a response root',
  'nesting-depth': 'Method rules 1 and Limits: at most three levels of nested objects in a response, and in filter and ordering paths',
  'collection-envelope': 'Collection response envelope: results with paging',
  'problem-response': 'Errors, Rules 1-2: 4xx/5xx answer application/problem+json, never a 2xx',
  'header-name': 'Headers, Custom headers: Svc- names',
  'media-type': 'Media types: application/vnd.svc-<name>[.v<n>]+json or +xml',
  'webhook-path': 'Webhook consumer endpoints: /_webhooks/ with kebab-case segments',
  'webhook-internal': 'Webhook consumer endpoints: x-internal: true'
} as const

export type RuleId = keyof typeof RULES

export const RULE_IDS = Object.keys(RULES) as RuleId[]

/** One broken rule: where (a JSON pointer into the linted document or schema) and why. */
export interface Violation {
  rule: RuleId
  path: string
  message: string
}

/** Rules switched off by id (`{ 'array-plural': false }`); absent means on. */
export type RuleSwitches = Partial<Record<RuleId, boolean>>

/** JSON Pointer escaping of one segment (RFC 6901, section 3). */
export function pointer (segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1')
}

/**
 * The convention's own schemas (Errors: the error object). Their names (`context`,
 * `source` values `body`/`query`/`header`) are fixed by the convention, so they are not linted.
 */
export const CONVENTION_SCHEMAS: ReadonlySet<string> = new Set(['Problem', 'ContextItem'])

/** Collects violations, dropping those of switched-off rules. */
export class Collector {
  readonly violations: Violation[] = []
  private readonly rules: RuleSwitches

  constructor (rules: RuleSwitches = {}) {
    this.rules = rules
  }

  add (rule: RuleId, path: string, message: string): void {
    if (this.rules[rule] !== false) this.violations.push({ rule, path, message })
  }
}
