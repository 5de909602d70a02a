// JSON request bodies parsed strictly, their refusals problems: UTF-8 only, and a refused
// `__proto__` member named as such. Used by the conventions plugin's parsers and the webhook
// consumer routes.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { problems } from './errors.js'

export type BufferParser = (request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => void

// `fatal`: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The deepest nesting of arrays and objects a body may have. Code that walks a value by
 * recursion (`JSON.stringify` with a replacer, a fingerprint, a driver's encoder) runs out of
 * stack some thousands of levels down, a 500; no request of an API nests near this deep.
 */
export const MAX_JSON_DEPTH = 64

/**
 * Whether valid JSON `text` nests arrays and objects deeper than `max`, read without
 * recursion. Brackets inside strings do not count; a backslash escapes the next character.
 */
export function nestsDeeperThan (text: string, max: number): boolean {
  // Each level takes two characters and an opening bracket: a text with no more than `max` of
  // those cannot go deeper. Counted by the engine's own search, where most bodies stop.
  if (text.length <= 2 * max) return false
  const braces = countUpTo(text, '{', max + 1)
  if (braces + countUpTo(text, '[', max + 1 - braces) <= max) return false
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return false
}

/** How many times `char` is in `text`, counted up to `limit` at most. */
function countUpTo (text: string, char: string, limit: number): number {
  let n = 0
  for (let i = text.indexOf(char); i !== -1 && n < limit; i = text.indexOf(char, i + 1)) n++
  return n
}

/**
 * Fastify's JSON parser (prototype poisoning refused) over the bytes as received: a body that
 * is not UTF-8 is a 400 (conventions: only UTF-8), where decoding it as a string would have
 * put U+FFFD in place of its bad bytes and stored that silently; and one nested deeper than
 * MAX_JSON_DEPTH is a 400 before any code walks it.
 */
export function strictJsonParser (instance: FastifyInstance): BufferParser {
  const parse = instance.getDefaultJsonParser('error', 'error')
  return (request, body, done) => {
    let text: string
    try {
      text = utf8.decode(body)
    } catch {
      done(problems.malformedJson('The body is not valid UTF-8; send it encoded in UTF-8, the only charset accepted.'))
      return
    }
    parse(request, text, (err, value) => {
      if (err === null) {
        if (nestsDeeperThan(text, MAX_JSON_DEPTH)) done(problems.badRequest(`The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, which is refused; send a flatter document.`))
        else done(null, value)
        return
      }
      done(refusedMember(err, text))
    })
  }
}

/**
 * Fastify reports valid JSON it refuses for a `__proto__` or `constructor.prototype` member
 * (prototype poisoning) as invalid JSON; told apart here, on the error path only, so the
 * client reads what to remove rather than to fix a syntax that is fine.
 */
function refusedMember (err: Error, text: string): Error {
  if ((err as { code?: string }).code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return err
  try {
    JSON.parse(text)
  } catch {
    return err
  }
  return problems.malformedJson('The body has a "__proto__" or "constructor.prototype" member, which is refused; remove it and retry.')
}
