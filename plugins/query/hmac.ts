import { createHash, type Hash } from 'node:crypto'

/*
 * HMAC-SHA256 (RFC 2104) from two SHA-256 states keyed once: each MAC copies them instead of
 * setting up a keyed HMAC context, which OpenSSL 3 makes slow (its key setup showed in profiles
 * of every collection page). The output is the standard HMAC's; the tests compare the two.
 */

const BLOCK_BYTES = 64

/** A function computing HMAC-SHA256 under `key`. */
export function hmacSha256 (key: Uint8Array): (message: Uint8Array) => Buffer {
  // Keys longer than a block are hashed first (RFC 2104 §2); shorter ones are zero-padded.
  const k = key.length > BLOCK_BYTES ? createHash('sha256').update(key).digest() : Buffer.from(key)
  const ipad = Buffer.alloc(BLOCK_BYTES, 0x36)
  const opad = Buffer.alloc(BLOCK_BYTES, 0x5c)
  for (let i = 0; i < k.length; i++) {
    ipad[i] = (ipad[i] as number) ^ (k[i] as number)
    opad[i] = (opad[i] as number) ^ (k[i] as number)
  }
  const inner: Hash = createHash('sha256').update(ipad)
  const outer: Hash = createHash('sha256').update(opad)
  return (message) => outer.copy().update(inner.copy().update(message).digest()).digest()
}
