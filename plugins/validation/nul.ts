import type { ErrorObject, ValidateFunction } from 'ajv'

/*
 * PostgreSQL text and jsonb cannot hold U+0000: a body string with one passes any schema,
 * then the store refuses the statement and the client gets a 500 for its own mistake
 * (conventions: Errors, rule 8). Found by the fuzz tests; refused as a validation error.
 */

/*
 * Nor can they hold a lone surrogate (UTF-16 half of a pair, `"\ud800"` in JSON): it has no
 * UTF-8 form, and jsonb refuses its escape. Refused the same way.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** The keyword of the errors below; the problem plugin reports it as INPUT_INVALID. */
export const NUL_KEYWORD = 'noNulCharacter'

/** Scanning stops after this many findings: enough to fix the body, bounded for any input. */
const MAX_ERRORS = 20

interface Frame { value: unknown, key: string, parent: Frame | null }

/** RFC 6901 pointer of a frame, built only for a finding (deep bodies would make eager paths quadratic). */
function pointerOf (frame: Frame): string {
  const keys: string[] = []
  for (let f: Frame | null = frame; f !== null && f.parent !== null; f = f.parent) keys.push(f.key.replace(/~/g, '~0').replace(/\//g, '~1'))
  return keys.reverse().map((k) => `/${k}`).join('')
}

/** What is wrong with `text` for the store, or null. */
function unstorable (text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)'
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode text (no lone surrogate)'
  return null
}

function finding (frame: Frame, data: string, why: string, what: string): ErrorObject {
  return { keyword: NUL_KEYWORD, instancePath: pointerOf(frame), schemaPath: `#/${NUL_KEYWORD}`, params: {}, message: `${why}${what}`, data }
}

/** Every string value or property name of `data` holding U+0000 or a lone surrogate, depth-first, without recursion. */
export function nulErrors (data: unknown): ErrorObject[] {
  const errors: ErrorObject[] = []
  const stack: Frame[] = [{ value: data, key: '', parent: null }]
  while (stack.length > 0 && errors.length < MAX_ERRORS) {
    const frame = stack.pop() as Frame
    const { value } = frame
    if (typeof value === 'string') {
      const why = unstorable(value)
      if (why !== null) errors.push(finding(frame, value, why, ''))
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: String(i), parent: frame })
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value)
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string
        const child = { value: (value as Record<string, unknown>)[key], key, parent: frame }
        const why = unstorable(key)
        if (why !== null) errors.push(finding(child, key, why, ' in a property name'))
        stack.push(child)
      }
    }
  }
  return errors
}

/**
 * `validate`, also failing (with its own errors first) when the data holds U+0000 anywhere in
 * what `scope` keeps of it (the whole data by default; a copy without the parts another
 * validator scans, with the same paths to the rest).
 */
export function refusingNul (validate: ValidateFunction, scope: (data: unknown) => unknown = (data) => data): ValidateFunction {
  const wrapped = ((data: unknown): boolean => {
    const valid = validate(data)
    const nul = nulErrors(scope(data))
    wrapped.errors = nul.length === 0 ? validate.errors : [...(validate.errors ?? []), ...nul]
    return valid && nul.length === 0
  }) as ValidateFunction
  wrapped.schema = validate.schema
  wrapped.schemaEnv = validate.schemaEnv
  wrapped.errors = null
  return wrapped
}
