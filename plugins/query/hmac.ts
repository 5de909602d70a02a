import { hash } from 'node:crypto'

/*
 * HMAC-SHA256 (RFC 2104) as two one-shot SHA-256 hashes over the padded keys and the message:
 * H((K ^ opad) || H((K ^ ipad) || m)). A keyed `createHmac` per MAC, or copies of two keyed
 * `Hash` states, make native objects per MAC that only garbage collection frees; this makes none
 * (bench/README.md: the page's cursor, measured in place). The output is the standard HMAC's;
 * the tests compare the two.
 */

const BLOCK_BYTES = 64

/** A function computing HMAC-SHA256 under `key`. */
export function hmacSha256 (key: Uint8Array): (message: Uint8Array) => Buffer {
  // Keys longer than a block are hashed first (RFC 2104 §2); shorter ones are zero-padded.
  const k = key.length > BLOCK_BYTES ? hash('sha256', key, 'buffer') : Buffer.from(key)
  const ipad = Buffer.alloc(BLOCK_BYTES, 0x36)
  const opad = Buffer.alloc(BLOCK_BYTES, 0x5c)
  for (let i = 0; i < k.length; i++) {
    ipad[i] = (ipad[i] as number) ^ (k[i] as number)
    opad[i] = (opad[i] as number) ^ (k[i] as number)
  }
  return (message) => hash('sha256', Buffer.concat([opad, hash('sha256', Buffer.concat([ipad, message]), 'buffer')]), 'buffer')
}
