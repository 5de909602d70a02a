// JSON request bodies parsed strictly, their refusals problems: UTF-8 only, and a refused
// `__proto__` member named as such. Used by the conventions plugin's parsers and the webhook
// consumer routes.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { problems } from './errors.js'

export type BufferParser = (request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => void

// `fatal`: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Fastify's JSON parser (prototype poisoning refused) over the bytes as received: a body that
 * is not UTF-8 is a 400 (conventions: only UTF-8), where decoding it as a string would have
 * put U+FFFD in place of its bad bytes and stored that silently.
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
        done(null, value)
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
