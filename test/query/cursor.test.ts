import { createHash, createHmac } from 'node:crypto'
import t from 'tap'
import { createCursorCodec, queryFingerprint } from '../../plugins/query/cursor.js'
import type { Keyset } from '../../model/query.js'

const secret = 'a server secret of enough length!'
const codec = createCursorCodec({ secret })
const ordering = [{ field: 'name', direction: 'asc' as const }, { field: 'id', direction: 'asc' as const }]
const fingerprint = queryFingerprint('/v1/documents', ordering, null)
const keyset: Keyset = { direction: 'next', values: ['Zoë 😀', 42, true, null, '9223372036854775807', '10.25', '2024-01-01T00:00:00.000Z'] }

t.test('a cursor round-trips its direction and typed values', async (t) => {
  const cursor = codec.encode(keyset, fingerprint)
  t.match(cursor, /^[A-Za-z0-9_-]+$/, 'URL-safe Base64 without padding')
  t.strictSame(codec.decode(cursor, fingerprint), keyset)
  const back: Keyset = { direction: 'previous', values: [] }
  t.strictSame(codec.decode(codec.encode(back, fingerprint), fingerprint), back)
  t.strictSame(createCursorCodec({ secret: Buffer.from(secret) }).decode(cursor, fingerprint), keyset, 'a string and its bytes are the same key')
})

t.test('every altered byte is refused', async (t) => {
  const cursor = codec.encode(keyset, fingerprint)
  const bytes = Buffer.from(cursor, 'base64url')
  let refused = 0
  for (let i = 0; i < bytes.length; i++) {
    for (const flip of [0x01, 0x80]) {
      const copy = Buffer.from(bytes)
      copy[i] = (copy[i] as number) ^ flip
      t.throws(() => codec.decode(copy.toString('base64url'), fingerprint), { name: 'QueryError', reason: 'cursor-invalid', parameter: 'cursor' })
      refused++
    }
  }
  t.equal(refused, bytes.length * 2)
})

t.test('every altered character is refused, even where Base64 has spare bits', async (t) => {
  const cursor = codec.encode(keyset, fingerprint)
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  for (let i = 0; i < cursor.length; i++) {
    const index = alphabet.indexOf(cursor[i] as string)
    // The next character of the alphabet differs in the lowest bit: the one Node's decoder drops at the end.
    const changed = cursor.slice(0, i) + alphabet[(index + 1) % 64] + cursor.slice(i + 1)
    t.throws(() => codec.decode(changed, fingerprint), { name: 'QueryError', reason: 'cursor-invalid' }, `character ${i}`)
  }
})

t.test('truncated, padded, foreign and malformed cursors are refused', async (t) => {
  const cursor = codec.encode(keyset, fingerprint)
  const other = createCursorCodec({ secret: 'another secret, also long enough' })
  const cases: Array<[string, unknown]> = [
    ['empty', ''],
    ['truncated', cursor.slice(0, -1)],
    ['cut to the MAC', cursor.slice(0, 44)],
    ['padded', cursor + '='],
    ['standard Base64', Buffer.from(cursor, 'base64url').toString('base64')],
    ['with a space', ' ' + cursor],
    ['foreign', other.encode(keyset, fingerprint)],
    ['too long', 'A'.repeat(4097)],
    ['another version', Buffer.concat([Buffer.of(2), Buffer.from(cursor, 'base64url').subarray(1)]).toString('base64url')],
    ['not a string', 42]
  ]
  for (const [label, value] of cases) {
    t.throws(() => codec.decode(value as string, fingerprint, 'paging.cursor'), {
      name: 'QueryError',
      code: 'INPUT_INVALID',
      reason: 'cursor-invalid',
      parameter: 'paging.cursor',
      message: /^The cursor is not valid: it was altered, cut short or issued elsewhere\./,
      value: typeof value === 'string' ? value : undefined
    }, label)
  }
})

t.test('a genuine cursor of another query is refused as a mismatch', async (t) => {
  const cursor = codec.encode(keyset, fingerprint)
  const filter = { kind: 'cmp' as const, field: 'name', op: 'eq' as const, values: ['a'], ci: false }
  const others = [
    queryFingerprint('/v1/authors', ordering, null),
    queryFingerprint('/v1/documents', [{ field: 'name', direction: 'desc' }, { field: 'id', direction: 'asc' }], null),
    queryFingerprint('/v1/documents', ordering, filter)
  ]
  t.equal(new Set([fingerprint, ...others]).size, 4, 'scope, ordering and filter each change the fingerprint')
  t.equal(queryFingerprint('/v1/documents', ordering, filter), others[2], 'the fingerprint is deterministic')
  for (const other of others) {
    t.throws(() => codec.decode(cursor, other), { reason: 'cursor-mismatch', parameter: 'cursor', message: /^The cursor belongs to another filter, ordering or collection\./, value: cursor })
  }
})

t.test('fingerprints stay the same whether remembered or not', async (t) => {
  // 128 bits of SHA-256 over scope, ordering key and filter: the value cursors already issued carry.
  const direct = (scope: string): string => createHash('sha256').update(`${scope}\u0000name,id\u0000null`).digest().subarray(0, 16).toString('base64url')
  t.equal(queryFingerprint('/v1/documents', ordering, null), direct('/v1/documents'))
  t.equal(queryFingerprint('/v1/documents', ordering, null), direct('/v1/documents'), 'asked again')
  // More distinct queries than are remembered: the memory is emptied, values do not change.
  for (let i = 0; i < 1200; i++) {
    const scope = `/v1/c${i % 600}`
    if (queryFingerprint(scope, ordering, null) !== direct(scope)) t.fail(`fingerprint of ${scope}`)
  }
  t.equal(queryFingerprint('/v1/documents', ordering, null), direct('/v1/documents'), 'after the memory was emptied')
})

t.test('the secret is checked at setup', async (t) => {
  for (const secret of ['short', Buffer.alloc(15), undefined, 42]) {
    t.throws(() => createCursorCodec({ secret } as { secret: string }), TypeError)
  }
  t.throws(() => createCursorCodec(undefined as unknown as { secret: string }), /got undefined/)
  t.throws(() => createCursorCodec({ secret: Buffer.alloc(15) }), new TypeError('cursor: secret must be a string or bytes of at least 16 bytes, got 15 bytes'))
  t.ok(createCursorCodec({ secret: new Uint8Array(16) }))
})

t.test('fingerprintOf: by spelling, per route and scope, the same fingerprint as the query model gives; bounded', async (t) => {
  const { fingerprintOf } = await import('../../plugins/query/resolve.js')
  const { resolveRoute } = await import('../../plugins/query/route.js')
  const { fields } = await import('./fixtures.js')
  const route = resolveRoute({ fields }, '/v1/documents', 'test', { defaultLimit: 20, maxLimit: 100, limits: { maxLength: 4096, maxDepth: 8, maxListSize: 100, maxComparisons: 50 } })
  const filter = { kind: 'cmp' as const, field: 'name', op: 'eq' as const, values: ['x'], ci: false }
  const spelling = JSON.stringify(['query', [['name', 'x']], null])
  const first = fingerprintOf(route, '/v1/documents', ordering, filter, spelling)
  t.equal(first, queryFingerprint('/v1/documents', ordering, filter), 'what the query model gives')
  t.equal(route.fingerprints.size, 1)
  // The spelling is the key: the model is not written out again (a different model here proves it).
  t.equal(fingerprintOf(route, '/v1/documents', ordering, null, spelling), first)
  t.not(fingerprintOf(route, '/v1/other', ordering, filter, spelling), first, 'another scope, another fingerprint')
  const other = resolveRoute({ fields }, '/v1/documents', 'test', { defaultLimit: 20, maxLimit: 100, limits: { maxLength: 4096, maxDepth: 8, maxListSize: 100, maxComparisons: 50 } })
  t.equal(fingerprintOf(other, '/v1/documents', ordering, null, spelling), queryFingerprint('/v1/documents', ordering, null), 'another route keeps its own')
  for (let i = 0; i < 600; i++) fingerprintOf(route, '/v1/documents', ordering, null, `spelling ${i}`)
  t.ok(route.fingerprints.size <= 512, `at most 512 remembered, ${route.fingerprints.size} now`)
})

t.test('a list of secrets: the first signs, every one verifies (rotation)', async (t) => {
  const oldKey = 'the secret used until the rotation'
  const newKey = 'the secret used from the rotation on'
  const keyset: Keyset = { direction: 'next', values: ['2024-01-01T00:00:00.000Z', 'id-7'] }
  const before = createCursorCodec({ secret: oldKey })
  const rotated = createCursorCodec({ secret: [newKey, oldKey] })
  const after = createCursorCodec({ secret: [newKey] })
  const issuedBefore = before.encode(keyset, fingerprint)
  t.strictSame(rotated.decode(issuedBefore, fingerprint), keyset, 'a cursor signed with the old key still works during the rotation')
  const issuedDuring = rotated.encode(keyset, fingerprint)
  t.strictSame(after.decode(issuedDuring, fingerprint), keyset, 'new cursors are signed with the first key')
  t.throws(() => before.decode(issuedDuring, fingerprint), { name: 'QueryError', reason: 'cursor-invalid' }, 'and not with the old one')
  t.throws(() => after.decode(issuedBefore, fingerprint), { name: 'QueryError', reason: 'cursor-invalid' }, 'a key taken out voids the cursors it signed')
  t.equal(createCursorCodec({ secret: [Buffer.from(newKey)] }).encode(keyset, fingerprint), after.encode(keyset, fingerprint), 'bytes and text alike')
  t.throws(() => createCursorCodec({ secret: [] }), new TypeError('cursor: secret must name at least one key, got an empty list'))
  t.throws(() => createCursorCodec({ secret: [newKey, 'short'] }), new TypeError('cursor: secret[1] must be a string or bytes of at least 16 bytes, got 5 bytes'))
})

t.test('the MAC is the standard HMAC-SHA256 of version and payload', async (t) => {
  const keyset: Keyset = { direction: 'previous', values: [1, 'x'] }
  const bytes = Buffer.from(codec.encode(keyset, fingerprint), 'base64url')
  const signed = Buffer.concat([bytes.subarray(0, 1), bytes.subarray(33)])
  t.strictSame(bytes.subarray(1, 33), createHmac('sha256', secret).update(signed).digest())
})
