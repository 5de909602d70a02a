import t from 'tap'
import { newEtag } from '../../plugins/resource/write/writer.js'

// Entity tags come from a block of random bytes drawn at a time: across several blocks they
// stay well formed (strong, quoted, 96 bits in base64url) and never repeat.
t.test('new entity tags: strong, quoted, unique across blocks of random bytes', async t => {
  const tags = Array.from({ length: 2000 }, () => newEtag())
  t.strictSame(tags.filter(tag => !/^"[A-Za-z0-9_-]{16}"$/.test(tag)), [], 'each one a quoted 16-character base64url tag')
  t.equal(new Set(tags).size, tags.length, 'no tag twice')
  const first = new Set(tags.slice(0, 256).map(tag => tag.slice(1, 3)))
  t.ok(first.size > 100, 'their starts spread over the alphabet: random, not counted')
})
