import type { Ajv, ErrorObject, KeywordDefinition } from 'ajv'
import { compareDecimal, parseDecimal } from './validators/number.js'

/** Limits of the `decimalDigits` keyword: digits before and after the decimal point. */
export interface DecimalDigits {
  integer?: number
  fraction?: number
}

type KeywordValidate = ((data: string) => boolean) & { errors?: Array<Partial<ErrorObject>> }

/**
 * `decimalMinimum` / `decimalMaximum`: inclusive bounds of a decimal string, compared
 * exactly (conventions: "Decimal" is a string, so JSON Schema's numeric `minimum` cannot
 * apply). The error carries `params.limit`, which the problem plugin maps to
 * INPUT_MIN_VALUE / INPUT_MAX_VALUE.
 */
function boundKeyword (keyword: 'decimalMinimum' | 'decimalMaximum'): KeywordDefinition {
  const isMinimum = keyword === 'decimalMinimum'
  return {
    keyword,
    type: 'string',
    schemaType: 'string',
    errors: true,
    compile (limit: string) {
      if (parseDecimal(limit) === undefined) {
        throw new TypeError(`${keyword} must be a decimal string like "0" or "-12.5", got ${JSON.stringify(limit)}`)
      }
      const message = `must be ${isMinimum ? 'at least' : 'at most'} ${limit}`
      const validate: KeywordValidate = (data) => {
        // A value that is not a decimal at all is reported once, by its format.
        if (parseDecimal(data) === undefined) return true
        const c = compareDecimal(data, limit)
        if (isMinimum ? c >= 0 : c <= 0) return true
        validate.errors = [{ keyword, message, params: { limit } }]
        return false
      }
      return validate
    }
  }
}

function digits (n: number): string {
  return n === 1 ? '1 digit' : `${n} digits`
}

function digitsMessage ({ integer, fraction }: DecimalDigits): string {
  if (fraction === 0) return integer === undefined ? 'must be a whole number' : `must be a whole number of at most ${digits(integer)}`
  const sides: string[] = []
  if (integer !== undefined) sides.push(`${digits(integer)} before the decimal point`)
  if (fraction !== undefined) sides.push(`${digits(fraction)} after the decimal point`)
  return `must have at most ${sides.join(' and ')}`
}

/** `decimalDigits: { integer, fraction }`: the most digits a decimal string may have on each side of its point. */
const digitsKeyword: KeywordDefinition = {
  keyword: 'decimalDigits',
  type: 'string',
  schemaType: 'object',
  errors: true,
  metaSchema: {
    type: 'object',
    properties: { integer: { type: 'integer', minimum: 1 }, fraction: { type: 'integer', minimum: 0 } },
    additionalProperties: false
  },
  compile (limits: DecimalDigits) {
    const message = digitsMessage(limits)
    const validate: KeywordValidate = (data) => {
      const p = parseDecimal(data)
      if (p === undefined) return true
      const intOk = limits.integer === undefined || p.integer.length <= limits.integer
      const fracOk = limits.fraction === undefined || p.fraction.length <= limits.fraction
      if (intOk && fracOk) return true
      validate.errors = [{ keyword: 'decimalDigits', message, params: { ...limits } }]
      return false
    }
    return validate
  }
}

export const decimalKeywords: readonly KeywordDefinition[] = [boundKeyword('decimalMinimum'), boundKeyword('decimalMaximum'), digitsKeyword]

/** Adds the decimal keywords to an Ajv instance; adding them twice is harmless. */
export function addDecimalKeywords (ajv: Ajv): Ajv {
  for (const def of decimalKeywords) {
    if (ajv.getKeyword(def.keyword as string) === false) ajv.addKeyword(def)
  }
  return ajv
}
