import { Ajv } from 'ajv'
import addStandardFormats from 'ajv-formats'
import { addConventionFormats } from '../../schemas/formats.js'

/** An Ajv set up like the suite's validation plugin: ajv-formats, then the convention's formats. */
export function makeAjv (): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: true })
  addStandardFormats.default(ajv)
  return addConventionFormats(ajv)
}

const ajv = makeAjv()
const validators = new Map<string, (value: unknown) => boolean>()

/** Checks one string against a format through Ajv, so the registration is tested with the validator. */
export function ajvAccepts (format: string, value: string): boolean {
  let validate = validators.get(format)
  if (validate === undefined) {
    const compiled = ajv.compile({ type: 'string', format })
    validate = (v) => compiled(v)
    validators.set(format, validate)
  }
  return validate(value)
}

/** `n` as a zero-padded string of `width` digits. */
export function pad (n: number, width: number): string {
  return String(n).padStart(width, '0')
}

/** Type-level equality, for asserting `Static<>` types at compile time. */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
export function assertType<T extends true> (): T | undefined { return undefined }
