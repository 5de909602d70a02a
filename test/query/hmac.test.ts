import t from 'tap'
import fc from 'fast-check'
import { createHmac } from 'node:crypto'
import { hmacSha256 } from '../../plugins/query/hmac.js'

// The cursor's HMAC-SHA256, made from two one-shot SHA-256 hashes, against node:crypto's own HMAC.

t.test('the same MAC as createHmac for any key and message, a key used many times', async t => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 4 }), (key, messages) => {
    const mac = hmacSha256(key)
    return messages.every((m) => mac(m).equals(createHmac('sha256', key).update(m).digest()))
  }), { numRuns: 500 })
})

t.test('RFC 4231 test cases 1, 2 and 6 (a key longer than a block)', async t => {
  const cases: Array<[Buffer, Buffer, string]> = [
    [Buffer.alloc(20, 0x0b), Buffer.from('Hi There'), 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'],
    [Buffer.from('Jefe'), Buffer.from('what do ya want for nothing?'), '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'],
    [Buffer.alloc(131, 0xaa), Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First'), '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54']
  ]
  for (const [key, message, expected] of cases) t.equal(hmacSha256(key)(message).toString('hex'), expected)
  // Exactly a block long: neither hashed nor padded.
  const block = Buffer.alloc(64, 7)
  t.same(hmacSha256(block)(Buffer.from('x')), createHmac('sha256', block).update('x').digest())
})
