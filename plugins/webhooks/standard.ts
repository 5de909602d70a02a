import { createHmac, timingSafeEqual } from 'node:crypto'
import { problems } from '../problem/index.js'
import { checkedDeliveryId, headerValue, MAX_DELIVERY_ID_LENGTH, type WebhookVerifier } from './verifier.js'
import { shownValue } from '../shared/options.js'

/** Options of the Standard Webhooks verifier (https://www.standardwebhooks.com). */
export interface StandardWebhooksOptions {
  /**
   * The endpoint's secret, `whsec_<base64>` (the prefix may be left out), or several
   * during a rotation: a delivery signed with any one of them is accepted. Required.
   */
  secrets: string | readonly string[]
  /**
   * How far `webhook-timestamp` may be from the server's clock, either way, in seconds.
   * Default 300, the value of the specification (and of its reference libraries).
   */
  tolerance?: number
}

const defaults = { tolerance: 300 }

const PREFIX = 'whsec_'
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
// A floor against a truncated or placeholder secret; the specification recommends 24 to 64 bytes.
const MIN_SECRET_BYTES = 16
const TIMESTAMP = /^\d{1,15}$/
const SIGNATURE_BYTES = 32

/** The key bytes of a `whsec_<base64>` secret, or null when it is not one. */
function keyOf (secret: unknown): Buffer | null {
  if (typeof secret !== 'string') return null
  const base64 = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret
  if (!BASE64.test(base64)) return null
  const key = Buffer.from(base64, 'base64')
  return key.length >= MIN_SECRET_BYTES ? key : null
}

function describe (secret: unknown): string {
  // Never the secret itself, even a malformed one: only its shape.
  if (typeof secret === 'string') return `a string of ${secret.length} characters`
  return Array.isArray(secret) ? `an array of ${secret.length}` : String(secret)
}

/** HMAC-SHA256 over `<id>.<timestamp>.<raw body>`: the exact bytes received, never a re-serialization. */
function hmac (key: Buffer, id: string, timestamp: string, body: string | Buffer): Buffer {
  const mac = createHmac('sha256', key)
  // A text body goes in one piece with its prefix: each update is a call into the binding.
  return (typeof body === 'string' ? mac.update(`${id}.${timestamp}.${body}`) : mac.update(`${id}.${timestamp}.`).update(body)).digest()
}

/**
 * The `webhook-signature` value for a delivery (`v1,<base64>`), as a producer sends it.
 * For tests and for services that call themselves; `timestamp` is in Unix seconds.
 */
export function signStandardWebhook (secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const key = keyOf(secret)
  if (key === null) throw new TypeError(`signStandardWebhook: secret must be whsec_<base64> of at least ${MIN_SECRET_BYTES} bytes, got ${describe(secret)}`)
  return `v1,${hmac(key, id, String(timestamp), body).toString('base64')}`
}

/**
 * Standard Webhooks verification, written on node:crypto rather than the
 * `standardwebhooks` package so the tolerance is an option, several secrets are checked
 * in one pass, the HMAC covers the raw bytes (the package decodes them as text first),
 * and each refusal says which check failed. Compatible with its signatures (tested).
 * The delivery id is `webhook-id`.
 */
export function standardWebhooks (opts: StandardWebhooksOptions): WebhookVerifier {
  const secrets: readonly unknown[] = typeof opts?.secrets === 'string' ? [opts.secrets] : opts?.secrets
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new TypeError(`standardWebhooks: secrets must be a whsec_<base64> secret or a non-empty array of them, got ${describe(secrets)}`)
  }
  const keys = secrets.map((secret, i) => {
    const key = keyOf(secret)
    if (key === null) throw new TypeError(`standardWebhooks: secrets[${i}] must be whsec_<base64> of at least ${MIN_SECRET_BYTES} bytes, got ${describe(secret)}`)
    return key
  })
  const tolerance = opts.tolerance ?? defaults.tolerance
  if (!Number.isInteger(tolerance) || tolerance < 1) {
    throw new TypeError(`standardWebhooks: tolerance must be a positive integer of seconds, got ${shownValue(tolerance)}`)
  }

  const verify: WebhookVerifier = (rawBody, request) => {
    const id = headerValue(request, 'webhook-id')
    const timestamp = headerValue(request, 'webhook-timestamp')
    const signature = headerValue(request, 'webhook-signature')
    if (id === undefined || timestamp === undefined || signature === undefined) {
      const missing = [id === undefined && 'webhook-id', timestamp === undefined && 'webhook-timestamp', signature === undefined && 'webhook-signature'].filter(Boolean)
      throw problems.unauthorized(`The delivery lacks ${missing.join(', ')}; Standard Webhooks deliveries carry webhook-id, webhook-timestamp and webhook-signature.`)
    }
    if (!TIMESTAMP.test(timestamp)) {
      throw problems.unauthorized('The webhook-timestamp header is not a Unix time in whole seconds.')
    }
    const skew = Math.floor(Date.now() / 1000) - Number(timestamp)
    if (Math.abs(skew) > tolerance) {
      throw problems.unauthorized(`The webhook-timestamp is ${Math.abs(skew)} seconds ${skew > 0 ? 'in the past' : 'in the future'}, beyond the ${tolerance} accepted; the producer must sign each attempt when it sends it.`)
    }
    // Space-delimited `v<n>,<base64>` entries; only v1 (HMAC-SHA256) is known here.
    const sent = signature.split(' ')
      .filter((entry) => entry.startsWith('v1,'))
      .map((entry) => entry.slice(3))
      .filter((b64) => BASE64.test(b64))
      .map((b64) => Buffer.from(b64, 'base64'))
      .filter((bytes) => bytes.length === SIGNATURE_BYTES)
    if (sent.length === 0) {
      throw problems.unauthorized('The webhook-signature header holds no v1 signature; send v1,<base64 HMAC-SHA256>, several separated by spaces.')
    }
    for (const key of keys) {
      const expected = hmac(key, id, timestamp, rawBody)
      if (sent.some((bytes) => timingSafeEqual(bytes, expected))) return { id: checkedDeliveryId(id, 'webhook-id') }
    }
    throw problems.unauthorized('No signature in webhook-signature matches the delivery; sign <webhook-id>.<webhook-timestamp>.<raw body> with the endpoint\'s secret.')
  }
  verify.documentation = {
    headers: {
      'webhook-id': { type: 'string', minLength: 1, maxLength: MAX_DELIVERY_ID_LENGTH, description: 'The delivery\'s id, the same on every retry: a delivery is applied once, a repeated id acknowledged with 204; a longer one gives 400.' },
      'webhook-timestamp': { type: 'string', pattern: TIMESTAMP.source, maxLength: 15, description: `When the producer sent this attempt, in Unix seconds; more than ${tolerance} seconds from the server's clock gives 401.` },
      'webhook-signature': { type: 'string', minLength: 1, maxLength: 8192, description: 'Space-separated `v1,<base64>` signatures: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` with the endpoint\'s secret; none matching gives 401.' }
    },
    description: 'Signed with Standard Webhooks (https://www.standardwebhooks.com): the webhook-id, webhook-timestamp and webhook-signature headers are required, and a missing or bad signature, or a timestamp too far from the server\'s clock, gives 401.'
  }
  return verify
}
