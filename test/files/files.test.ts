import { Readable } from 'node:stream'
import t from 'tap'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import resource, { defineResource } from '../../plugins/resource/index.js'
import files, { FileDescription, dispositionOf, type FilesPluginOptions } from '../../plugins/files/index.js'
import openapi from '../../plugins/openapi/index.js'
import problem from '../../plugins/problem/index.js'
import validation from '../../plugins/validation/index.js'
import conventions from '../../plugins/conventions/index.js'
import query from '../../plugins/query/index.js'
import { Unavailable } from '../../store/errors.js'
import type { Store } from '../../store/types.js'
import { pglite } from '../support/databases.js'
import { CURSOR_SECRET, prerequisites } from '../resource/helper.js'

// The files plugin with only its prerequisites (no auth, no If-Match required), by inject:
// its option checks, the raw and multipart readers, and the download headers.

const notes = defineResource({
  name: 'note',
  collection: 'notes',
  path: '/v1/notes',
  idParam: 'noteId',
  fields: {
    title: Type.String({ minLength: 1, maxLength: 50 }),
    attachment: FileDescription(),
    other: Type.String({ default: 'x' })
  },
  readOnly: ['attachment']
})

const options: FilesPluginOptions = { resources: { notes: { field: 'attachment', mediaTypes: ['application/pdf', 'text/plain; charset=utf-8'], maxBytes: 100 } } }

async function build (store: Store, opts: unknown = options): Promise<FastifyInstance> {
  const app = await prerequisites(Fastify())
  await app.register(openapi)
  await app.register(resource, { store, resources: [notes], migrations: false })
  await app.register(files, opts as FilesPluginOptions)
  await app.ready()
  return app
}

t.test('files plugin alone', async t => {
  const store = await pglite.create(t)
  const app = await build(store)
  t.teardown(() => app.close())

  const newNote = async (): Promise<{ url: string, etag: string }> => {
    const note = JSON.parse((await app.inject({ method: 'POST', url: '/v1/notes', payload: { title: 'n' } })).body)
    t.equal(note.attachment, null, 'none at first')
    return { url: `/v1/notes/${note.id as string}`, etag: note.etag }
  }

  t.test('option checks name the option at boot', async t => {
    const cases: Array<[unknown, RegExp]> = [
      [{ resources: {}, extra: 1 }, /extra/],
      [{ resources: {} }, /resources must be an object with at least one/],
      [{ resources: [] }, /resources must be an object/],
      [{ resources: { nope: { mediaTypes: ['application/pdf'] } } }, /resources\.nope must name a resource/],
      [{ resources: { notes: null } }, /resources\.notes must be \{ mediaTypes/],
      [{ resources: { notes: { mediaTypes: ['application/pdf'], fiel: 'x' } } }, /fiel/],
      [{ resources: { notes: { mediaTypes: ['application/pdf'] } } }, /resources\.notes\.field must be a read-only field/],
      [{ resources: { notes: { field: 'other', mediaTypes: ['application/pdf'] } } }, /resources\.notes\.field/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['application/pdf'], maxBytes: 0 } } }, /maxBytes must be a positive integer/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['application/pdf'], table: '' } } }, /^files plugin: resources\.notes\.table must be a lowercase SQL name of at most 41 characters, got ""$/],
      // Quoted, such a name would make a table no other plugin's rule allows, and a long one is cut by PostgreSQL at 63 bytes.
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['application/pdf'], table: 'Note Files' } } }, /resources\.notes\.table must be a lowercase SQL name/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['application/pdf'], table: 'x'.repeat(64) } } }, /resources\.notes\.table must be a lowercase SQL name/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['application/pdf'], table: 7 } } }, /resources\.notes\.table must be a lowercase SQL name of at most 41 characters, got 7$/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: [] } } }, /mediaTypes must be a non-empty array/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['image/*'] } } }, /concrete media types/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['multipart/form-data'] } } }, /concrete media types/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: [7] } } }, /concrete media types/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['text/plain; charset=latin1'] } } }, /charset=UTF-8/],
      [{ resources: { notes: { field: 'attachment', mediaTypes: ['text/plain; format=flowed'] } } }, /charset=UTF-8/]
    ]
    for (const [opts, message] of cases) {
      await t.rejects(build(store, opts), message, JSON.stringify(opts))
    }
    const alone = Fastify()
    t.teardown(() => alone.close())
    await alone.register(problem)
    await t.rejects(async () => { await alone.register(files, options); await alone.ready() }, /needs the resource plugin/, 'the resource plugin first')
  })

  t.test('a raw upload with or without Content-Length, its limit, and the download', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    // Transfer-coded: no Content-Length, so the limit is counted as the chunks come.
    const chunked = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'text/plain' }, payload: Readable.from([Buffer.from('hello '), Buffer.from('there')]) })
    t.equal(chunked.statusCode, 204)
    const entity = JSON.parse((await app.inject({ url: note.url })).body)
    t.match(entity.attachment, { mediaType: 'text/plain; charset=UTF-8', filename: null, byteCount: '11' })
    t.equal(chunked.headers.etag, entity.etag)
    const got = await app.inject({ url })
    t.equal(got.body, 'hello there')
    t.equal(got.headers['content-disposition'], 'attachment', 'no name: attachment alone')
    t.equal(got.headers['content-type'], 'text/plain; charset=UTF-8')

    const over = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf' }, payload: Readable.from([Buffer.alloc(60), Buffer.alloc(60)]) })
    t.equal(over.statusCode, 413)
    t.match(JSON.parse(over.body), { status: 413, detail: /100 bytes/ })
    const declared = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf' }, payload: Buffer.alloc(101) })
    t.equal(declared.statusCode, 413, 'a Content-Length above the limit, refused before reading')

    const empty = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="C:\\\\dir\\\\empty.pdf"' }, payload: Buffer.alloc(0) })
    t.equal(empty.statusCode, 204, 'an empty file')
    t.match(JSON.parse((await app.inject({ url: note.url })).body).attachment, { byteCount: '0', filename: 'empty.pdf', mediaType: 'application/pdf' }, 'a name, never a path')
    t.equal((await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename=""' }, payload: 'x' })).statusCode, 204)
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment.filename, null, 'a blank name is none')

    const none = await app.inject({ method: 'PUT', url })
    t.equal(none.statusCode, 415, 'no body at all')
    t.match(JSON.parse(none.body).detail, /as the body/)
    for (const header of ['form-data; name="file"', 'attachment; filename*=UTF-8\'\'%E0%A4%A', '"quoted"']) {
      const bad = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': header }, payload: 'x' })
      t.equal(bad.statusCode, 400, header)
      t.match(JSON.parse(bad.body), { context: [{ field: 'Content-Disposition', source: 'header' }] })
    }
    // One value (RFC 6266): repeated, which name was meant is unclear, as for the other one-value headers.
    const twice = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': ['attachment; filename="a.pdf"', 'attachment; filename="b.pdf"'] as unknown as string }, payload: 'x' })
    t.equal(twice.statusCode, 400, 'Content-Disposition twice')
    t.match(JSON.parse(twice.body), { context: [{ code: 'INPUT_INVALID', field: 'Content-Disposition', source: 'header', message: /once/ }] })
    t.equal((await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': 'inline; filename*=UTF-8\'\'%E0%A4%A; filename="fallback.pdf"' }, payload: 'x' })).statusCode, 204, 'an undecodable filename* with a fallback')
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment.filename, 'fallback.pdf')
    // Without the conventions plugin's check (switched off here by the type it accepts), the plugin refuses it itself.
    t.equal((await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/json' }, payload: '{}' })).statusCode, 415)
  })

  t.test('a filename holding a control character (filename*=UTF-8\'\'…%00…) is a 400 naming where it came from, not the store\'s 500', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    for (const [name, encoded] of [['NUL', 'a%00b.pdf'], ['a line break', 'a%0D%0ASet-Cookie%3A%20x.pdf'], ['a tab', 'a%09b.pdf'], ['DEL', 'a%7Fb.pdf']]) {
      const raw = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': `attachment; filename*=UTF-8''${encoded as string}; filename="ab.pdf"` }, payload: 'x' })
      t.equal(raw.statusCode, 400, `${name as string}: a raw upload`)
      t.match(JSON.parse(raw.body), { context: [{ code: 'INPUT_INVALID', field: 'Content-Disposition', source: 'header', message: /control character/ }] })
      const multipart = await app.inject({
        method: 'PUT',
        url,
        headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
        payload: `--xyz\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''${encoded as string}\r\nContent-Type: application/pdf\r\n\r\nabc\r\n--xyz--\r\n`
      })
      t.equal(multipart.statusCode, 400, `${name as string}: a multipart upload`)
      // busboy does not take a part whose name decodes to a line break for a file at all.
      t.match(JSON.parse(multipart.body), { context: [{ code: 'INPUT_INVALID', field: 'file', source: 'body', message: name === 'a line break' ? /none was sent/ : /control character/ }] })
    }
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment, null, 'nothing stored')
    const accepted = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename*=UTF-8\'\'r%C3%A9sum%C3%A9%20%E2%80%94%20v2.pdf; filename="resume.pdf"' }, payload: 'x' })
    t.equal(accepted.statusCode, 204, 'a name of printable characters, non-ASCII and spaces included, is kept')
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment.filename, 'résumé — v2.pdf')
  })

  t.test('a filename whose bytes are not UTF-8 is a 400, never stored as U+FFFD; a plain filename= of UTF-8 bytes is read as UTF-8, not kept as mojibake', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    // Node reads a header's bytes as latin1: the UTF-8 bytes of é arrive as Ã©, a latin1 é as é.
    const kept: Array<[string, string, string]> = [
      ['UTF-8 bytes in filename=', 'attachment; filename="\u00c3\u00a9t\u00c3\u00a9.pdf"', 'été.pdf'],
      ['latin1 bytes in filename= (RFC 6266)', 'attachment; filename="n\u00b01 \u00e9t\u00e9.pdf"', 'n°1 été.pdf']
    ]
    for (const [name, disposition, filename] of kept) {
      const raw = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': disposition }, payload: 'x' })
      t.equal(raw.statusCode, 204, name)
      t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment.filename, filename, name)
    }
    await app.inject({ method: 'DELETE', url })
    for (const disposition of ['attachment; filename="a\u0085b.pdf"', 'attachment; filename*=UTF-8\'\'a%C2%85b.pdf']) {
      const c1 = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': disposition }, payload: 'x' })
      t.equal(c1.statusCode, 400, disposition)
      t.match(JSON.parse(c1.body), { context: [{ field: 'Content-Disposition', message: /control character \(U\+0000 to U\+001F, or U\+007F to U\+009F\)/ }] }, `a C1 control: ${disposition}`)
    }
    const parts: Array<[string, Buffer]> = [
      ['a byte that is not UTF-8 in filename=', Buffer.concat([Buffer.from('--xyz\r\nContent-Disposition: form-data; name="file"; filename="a'), Buffer.from([0xff]), Buffer.from('b.pdf"\r\nContent-Type: application/pdf\r\n\r\nabc\r\n--xyz--\r\n')])],
      ['a lone surrogate in filename*', Buffer.from('--xyz\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8\'\'a%ED%A0%80b.pdf\r\nContent-Type: application/pdf\r\n\r\nabc\r\n--xyz--\r\n')]
    ]
    for (const [name, payload] of parts) {
      const multipart = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, payload })
      t.equal(multipart.statusCode, 400, name)
      t.match(JSON.parse(multipart.body), { context: [{ code: 'INPUT_INVALID', field: 'file', source: 'body', message: 'must name a file in UTF-8: the name sent has bytes that are not UTF-8' }] }, name)
    }
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment, null, 'nothing stored')
    const utf8 = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, payload: Buffer.from('--xyz\r\nContent-Disposition: form-data; name="file"; filename="été.pdf"\r\nContent-Type: application/pdf\r\n\r\nabc\r\n--xyz--\r\n') })
    t.equal(utf8.statusCode, 204, 'a multipart part\'s name in UTF-8, as browsers send it')
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment.filename, 'été.pdf')
  })

  t.test('a filename of 255 characters is kept whole, whatever their size in UTF-16; a longer one is a 400, not cut short or a 500', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    const emoji = '\u{1F600}'
    const cases: Array<[string, string, number]> = [
      ['255 ASCII characters', `${'a'.repeat(251)}.pdf`, 204],
      ['255 characters, one outside the BMP across the 255th UTF-16 unit', `${'a'.repeat(250)}${emoji}.pdf`, 204],
      ['255 characters outside the BMP', `${emoji.repeat(251)}.pdf`, 204],
      ['256 characters', `${'b'.repeat(252)}.pdf`, 400],
      ['256 characters, one outside the BMP', `${'a'.repeat(251)}${emoji}.pdf`, 400]
    ]
    for (const [name, filename, status] of cases) {
      const encoded = encodeURIComponent(filename)
      const raw = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': `attachment; filename*=UTF-8''${encoded}; filename="x.pdf"` }, payload: 'x' })
      t.equal(raw.statusCode, status, `${name}: a raw upload`)
      const multipart = await app.inject({
        method: 'PUT',
        url,
        headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
        payload: `--xyz\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''${encoded}\r\nContent-Type: application/pdf\r\n\r\nabc\r\n--xyz--\r\n`
      })
      t.equal(multipart.statusCode, status, `${name}: a multipart upload`)
      if (status === 204) {
        t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment.filename, filename, `${name}: kept whole`)
      } else {
        t.match(JSON.parse(raw.body), { context: [{ code: 'INPUT_INVALID', field: 'Content-Disposition', source: 'header', message: 'must name a file of at most 255 characters (after any path), got 256' }] })
        t.match(JSON.parse(multipart.body), { context: [{ code: 'INPUT_INVALID', field: 'file', source: 'body', message: /at most 255 characters/ }] })
      }
    }
  })

  t.test('conditional reads: If-None-Match 304 on GET and HEAD, a stale If-Match 412, HEAD 406', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    t.equal((await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="a.pdf"' }, payload: '%PDF' })).statusCode, 204)
    const { etag } = (await app.inject({ method: 'HEAD', url })).headers as { etag: string }
    t.equal((await app.inject({ url, headers: { 'if-none-match': etag } })).statusCode, 304)
    const head304 = await app.inject({ method: 'HEAD', url, headers: { 'if-none-match': etag } })
    t.equal(head304.statusCode, 304)
    t.equal((await app.inject({ url, headers: { 'if-match': '"stale"' } })).statusCode, 412)
    t.equal((await app.inject({ url, headers: { 'if-match': etag } })).body, '%PDF')
    t.equal((await app.inject({ method: 'HEAD', url, headers: { accept: 'image/png' } })).statusCode, 406)
    t.equal((await app.inject({ url, headers: { accept: ' ' } })).statusCode, 200, 'a blank Accept is anything')
    t.equal((await app.inject({ url: '/v1/notes/nope/attachment', headers: { 'if-none-match': etag } })).statusCode, 404)
    t.equal((await app.inject({ method: 'HEAD', url: '/v1/notes/nope/attachment' })).statusCode, 404)
  })

  t.test('a refused or 304 read carries the file\'s ETag, never its Content-Type or Content-Disposition', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    t.equal((await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="a.pdf"' }, payload: '%PDF' })).statusCode, 204)
    const { etag } = (await app.inject({ method: 'HEAD', url })).headers as { etag: string }
    const file = dispositionOf('a.pdf')
    const cases: Array<[string, 'GET' | 'HEAD', Record<string, string>, number, string | undefined]> = [
      ['GET', 'GET', {}, 200, file],
      ['HEAD', 'HEAD', {}, 200, file],
      ['GET, If-Match matching', 'GET', { 'if-match': etag }, 200, file],
      ['GET, a stale If-Match', 'GET', { 'if-match': '"stale"' }, 412, undefined],
      ['HEAD, a stale If-Match', 'HEAD', { 'if-match': '"stale"' }, 412, undefined],
      ['GET, If-None-Match matching', 'GET', { 'if-none-match': etag }, 304, undefined],
      ['HEAD, If-None-Match matching', 'HEAD', { 'if-none-match': etag }, 304, undefined]
    ]
    for (const [name, method, headers, status, disposition] of cases) {
      const res = await app.inject({ method, url, headers })
      t.equal(res.statusCode, status, name)
      t.equal(res.headers.etag, etag, `${name}: the ETag`)
      t.equal(res.headers['content-disposition'], disposition, `${name}: Content-Disposition`)
      if (status === 412) t.match(res.headers['content-type'], /^application\/problem\+json/, `${name}: a problem`)
      if (status === 304) t.equal(res.headers['content-type'], undefined, `${name}: no Content-Type`)
    }
  })

  t.test('multipart: a malformed body is a 400', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    const res = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, payload: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\nabc' })
    t.equal(res.statusCode, 400)
    t.match(JSON.parse(res.body).detail, /malformed or incomplete/)
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment, null, 'nothing stored')
  })

  t.test('multipart: one part named file; any other part, none, another type or too large a file is refused', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    const put = async (parts: Array<[string, string | Blob, string?]>): Promise<{ statusCode: number, body: string }> => {
      const form = new FormData()
      for (const [name, value, filename] of parts) {
        if (typeof value === 'string') form.append(name, value)
        else form.append(name, value, filename)
      }
      const encoded = new Request('http://localhost/', { method: 'PUT', body: form })
      return await app.inject({ method: 'PUT', url, headers: { 'content-type': encoded.headers.get('content-type') as string }, payload: Buffer.from(await encoded.arrayBuffer()) })
    }
    const pdf = (bytes: string): Blob => new Blob([bytes], { type: 'application/pdf' })
    t.equal((await put([['file', pdf('%PDF-1'), 'dir/one.pdf']])).statusCode, 204)
    t.match(JSON.parse((await app.inject({ url: note.url })).body).attachment, { mediaType: 'application/pdf', filename: 'one.pdf', byteCount: '6' })
    const cases: Array<[string, Array<[string, string | Blob, string?]>, number, RegExp]> = [
      ['a second part', [['file', pdf('a'), 'a.pdf'], ['note', 'x']], 400, /a second part named "note"/],
      ['a field first', [['note', 'x'], ['file', pdf('a'), 'a.pdf']], 400, /a field part named "note"/],
      ['a file of another name', [['upload', pdf('a'), 'a.pdf']], 400, /a file part named "upload"/],
      ['no part at all', [], 400, /none was sent/],
      ['another type', [['file', new Blob(['a'], { type: 'image/gif' }), 'a.gif']], 415, /image\/gif/],
      ['too large', [['file', pdf('x'.repeat(101)), 'a.pdf']], 413, /100 bytes/]
    ]
    for (const [label, parts, status, detail] of cases) {
      const res = await put(parts)
      t.equal(res.statusCode, status, label)
      const body = JSON.parse(res.body)
      t.match(`${body.detail as string} ${(body.context?.[0]?.message ?? '') as string}`, detail, label)
    }
    t.match(JSON.parse((await app.inject({ url: note.url })).body).attachment, { filename: 'one.pdf' }, 'the refusals changed nothing')
  })

  // A multipart body built by hand: one part named file, its headers after its Content-Disposition.
  const filePart = (headers: string, bytes: Buffer | string, boundary = 'xyz'): Buffer => Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n${headers}\r\n`, 'latin1'),
    Buffer.from(bytes),
    Buffer.from(`\r\n--${boundary}--\r\n`)
  ])
  const latin1 = Buffer.from('caf\xe9', 'latin1')
  const utf8 = Buffer.from('café')

  t.test('multipart: the file part\'s Content-Type decides as a raw body\'s does, its charset included', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    // [the part's Content-Type, also sent as a raw body's; its bytes; the status of both; the type stored]
    const cases: Array<[string, Buffer, number, string?]> = [
      ['text/plain; charset=ISO-8859-1', latin1, 415],
      ['text/plain; CHARSET=latin1', latin1, 415],
      ['application/pdf; charset=ISO-8859-1', latin1, 415],
      ['text/plain; charset', utf8, 415],
      ['text/plain; charset=UTF-8', utf8, 204, 'text/plain; charset=UTF-8'],
      ['text/plain; charset="utf-8"', utf8, 204, 'text/plain; charset=UTF-8'],
      ['Text/Plain; Charset=Utf-8', utf8, 204, 'text/plain; charset=UTF-8'],
      ['text/plain', utf8, 204, 'text/plain; charset=UTF-8'],
      ['application/pdf', Buffer.from('%PDF-1'), 204, 'application/pdf'],
      ['application/pdf; version=1.7', Buffer.from('%PDF-1'), 204, 'application/pdf']
    ]
    for (const [type, bytes, status, stored] of cases) {
      for (const as of ['multipart', 'raw'] as const) {
        const label = `${type}, ${as}`
        t.equal((await app.inject({ method: 'DELETE', url })).statusCode, 204)
        const res = as === 'raw'
          ? await app.inject({ method: 'PUT', url, headers: { 'content-type': type }, payload: bytes })
          : await app.inject({ method: 'PUT', url, headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, payload: filePart(`Content-Type: ${type}\r\n`, bytes) })
        t.equal(res.statusCode, status, label)
        const got = await app.inject({ url })
        if (stored === undefined) {
          if (as === 'multipart') t.equal(JSON.parse(res.body).detail, `The file part's Content-Type ${JSON.stringify(type)} is not accepted by PUT ${url}; send the file as one of application/pdf, text/plain; charset=UTF-8.`, label)
          t.equal(got.statusCode, 404, `${label}: nothing stored`)
        } else {
          t.equal(got.headers['content-type'], stored, label)
          t.equal(got.rawPayload.toString('hex'), bytes.toString('hex'), `${label}: served as stored`)
        }
      }
    }
  })

  t.test('multipart: the part\'s headers and the body\'s parts are read as busboy reads them, a byte at a time too', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    const disposition = 'Content-Disposition: form-data; name="file"; filename="a.txt"'
    const header = (name: string): string => `${name}: ${'x'.repeat(80 * 1024)}\r\n`
    // [label, the request's Content-Type, the body, the status, the type stored or what the problem says]
    const cases: Array<[string, string, Buffer, number, string | RegExp]> = [
      ['a folded Content-Type', 'boundary=xyz', filePart('Content-Type: text/plain;\r\n charset=ISO-8859-1\r\n', latin1), 415, /"text\/plain; charset=ISO-8859-1"/],
      ['after a folded header', 'boundary=xyz', filePart('X-Note: a\r\n\tb\r\nContent-Type: text/plain; charset=ISO-8859-1\r\n', latin1), 415, /"text\/plain; charset=ISO-8859-1"/],
      ['the first of two Content-Types', 'boundary=xyz', filePart('Content-Type: text/plain; charset=UTF-8\r\nContent-Type: text/plain; charset=ISO-8859-1\r\n', utf8), 204, 'text/plain; charset=UTF-8'],
      ['no Content-Type: text/plain', 'boundary=xyz', filePart('', utf8), 204, 'text/plain; charset=UTF-8'],
      ['none after a line that is not a header', 'boundary=xyz', filePart('not a header\r\nContent-Type: application/pdf\r\n', utf8), 204, 'text/plain; charset=UTF-8'],
      ['none after a bare line feed', 'boundary=xyz', filePart('X-Note: a\nb\r\nContent-Type: application/pdf\r\n', utf8), 204, 'text/plain; charset=UTF-8'],
      ['a quoted boundary, after another parameter', 'charset=UTF-8; boundary="x y"', filePart('Content-Type: text/plain; charset=ISO-8859-1\r\n', latin1, 'x y'), 415, /ISO-8859-1/],
      ['a preamble, a header block cut off by a delimiter, and an epilogue', 'boundary=xyz', Buffer.concat([Buffer.from('preamble\r\n--xyz\r\nContent-Type: text/plain; charset=ISO-8859-1\r\n'), filePart('Content-Type: application/pdf\r\n', 'a'), Buffer.from('epilogue')]), 204, 'application/pdf'],
      ['a part without Content-Disposition before it', 'boundary=xyz', Buffer.concat([Buffer.from('--xyz\r\nContent-Type: application/pdf\r\n\r\na\r\n'), filePart('Content-Type: text/plain; charset=ISO-8859-1\r\n', latin1)]), 400, /not a form-data field/],
      ['a part without Content-Disposition after it', 'boundary=xyz', Buffer.concat([filePart('Content-Type: application/pdf\r\n', 'a').subarray(0, -11), Buffer.from('\r\n--xyz\r\nContent-Type: text/plain\r\n\r\nb\r\n--xyz--\r\n')]), 400, /not a form-data field/],
      ['a transport padding', 'boundary=xyz', Buffer.from(`--xyz \r\n${disposition}\r\n\r\na\r\n--xyz--\r\n`), 400, /none was sent/],
      ['no boundary', '', filePart('Content-Type: application/pdf\r\n', 'a'), 400, /malformed/],
      ['a header block above 80 KiB', 'boundary=xyz', filePart(header('X-Pad'), 'a'), 400, /malformed/]
    ]
    for (const [label, params, body, status, expected] of cases) {
      for (const chunks of [[body], [...body].map(byte => Buffer.from([byte]))]) {
        if (label.includes('80 KiB') && chunks.length > 1) continue
        const how = `${label}, ${chunks.length === 1 ? 'in one chunk' : 'a byte at a time'}`
        t.equal((await app.inject({ method: 'DELETE', url })).statusCode, 204)
        const res = await app.inject({ method: 'PUT', url, headers: { 'content-type': `multipart/form-data${params === '' ? '' : `; ${params}`}` }, payload: Readable.from(chunks) })
        t.equal(res.statusCode, status, how)
        if (typeof expected === 'string') t.equal((await app.inject({ url })).headers['content-type'], expected, how)
        else {
          const problem = JSON.parse(res.body)
          t.match(`${problem.detail as string} ${(problem.context?.[0]?.message ?? '') as string}`, expected, how)
          t.equal((await app.inject({ url })).statusCode, 404, `${how}: nothing stored`)
        }
      }
    }
    // A header block still open past 80 KiB: the rest is not waited for.
    const open = Buffer.from(`--xyz\r\n${disposition}\r\n${header('X-Pad')}`)
    const res = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, payload: Readable.from([open, Buffer.from('\r\na\r\n--xyz--\r\n')]) })
    t.equal(res.statusCode, 400)
    t.match(JSON.parse(res.body).detail, /malformed/)
  })

  t.test('DELETE removes the file and clears the field; a repeated one changes the entity again', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    t.equal((await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf' }, payload: 'x' })).statusCode, 204)
    const del = await app.inject({ method: 'DELETE', url })
    t.equal(del.statusCode, 204)
    const entity = JSON.parse((await app.inject({ url: note.url })).body)
    t.equal(entity.attachment, null)
    t.equal(del.headers.etag, entity.etag)
    t.equal((await app.inject({ url })).statusCode, 404)
    t.equal((await app.inject({ method: 'DELETE', url: '/v1/notes/nope/attachment' })).statusCode, 404, 'an unknown entity')
  })

  t.test('an upload repeated with its Svc-Idempotency-Key is answered, not applied again', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    const headers = { 'content-type': 'application/pdf', 'svc-idempotency-key': `key-${crypto.randomUUID()}` }
    const first = await app.inject({ method: 'PUT', url, headers, payload: 'first' })
    t.equal(first.statusCode, 204)
    const stored = JSON.parse((await app.inject({ url: note.url })).body)
    t.equal(first.headers.etag, stored.etag)
    const again = await app.inject({ method: 'PUT', url, headers, payload: 'first' })
    t.equal(again.statusCode, 204)
    t.equal(again.headers.etag, stored.etag, 'a replay answers the first answer\'s ETag')
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).etag, stored.etag, 'nothing written again')
  })

  t.test('an upload whose statement misses though its If-Match holds is decided again, the bytes written with the entity', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    // As when another change commits between the statement's snapshot and its update: its If-Match made stale, once.
    const query = store.query
    let missed = false
    store.query = async (sql, params, opts) => {
      if (!missed && /w AS \(UPDATE "notes" AS t .*t\.etag = ANY\(/s.test(sql) && params !== undefined) {
        missed = true
        params = params.map((p) => Array.isArray(p) ? ['"elsewhere"'] : p)
      }
      return await query(sql, params, opts)
    }
    t.teardown(() => { store.query = query })
    const put = await app.inject({ method: 'PUT', url, headers: { 'content-type': 'text/plain; charset=utf-8', 'if-match': note.etag }, payload: 'decided again' })
    t.ok(missed, 'the staged miss was used')
    t.equal(put.statusCode, 204)
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).etag, put.headers.etag, 'the entity written once, at the ETag answered')
    t.equal((await app.inject({ url })).body, 'decided again', 'and its bytes with it')
  })

  t.test('a file lives as long as its entity: a hard delete removes it, a new entity of the same id has none', async t => {
    const note = await newNote()
    const url = `${note.url}/attachment`
    t.equal((await app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/pdf' }, payload: 'x' })).statusCode, 204)
    t.equal((await app.inject({ method: 'DELETE', url: note.url })).statusCode, 204)
    t.equal((await app.inject({ method: 'PUT', url: note.url, payload: { title: 'again' } })).statusCode, 204, 'created again')
    t.equal(JSON.parse((await app.inject({ url: note.url })).body).attachment, null)
    t.equal((await app.inject({ url })).statusCode, 404)
  })

  t.test('without the conventions plugin\'s Content-Type rule, the plugin refuses other types itself', async t => {
    const bare = Fastify()
    t.teardown(() => bare.close())
    await bare.register(problem)
    await bare.register(validation)
    await bare.register(conventions, { userAgent: false, contentType: false })
    await bare.register(query, { cursorSecret: CURSOR_SECRET })
    await bare.register(resource, { store, resources: [notes], migrations: false })
    await bare.register(files, options)
    const note = await newNote()
    const url = `${note.url}/attachment`
    for (const type of ['application/json', 'text/plain; charset=latin1', 'not a type']) {
      const res = await bare.inject({ method: 'PUT', url, headers: { 'content-type': type }, payload: 'x' })
      t.equal(res.statusCode, 415, type)
    }
    t.equal((await bare.inject({ method: 'PUT', url, payload: Readable.from([Buffer.from('x')]) })).statusCode, 415, 'a body without a type')
    t.equal((await bare.inject({ method: 'PUT', url, headers: { 'content-type': 'text/plain; charset=UTF-8' }, payload: 'ok' })).statusCode, 204)
  })

  t.test('a store that cannot answer: 503', async t => {
    const note = await newNote()
    const query = store.query
    store.query = async () => { throw new Unavailable('down') }
    t.teardown(() => { store.query = query })
    t.equal((await app.inject({ url: `${note.url}/attachment` })).statusCode, 503)
    t.equal((await app.inject({ method: 'HEAD', url: `${note.url}/attachment` })).statusCode, 503)
  })

  t.test('the document describes the bodies and the types of the download', async t => {
    const doc = JSON.parse((await app.inject({ url: '/openapi.json' })).body)
    const path = doc.paths['/v1/notes/{noteId}/attachment']
    t.strictSame(Object.keys(path.put.requestBody.content).sort(), ['application/pdf', 'multipart/form-data', 'text/plain; charset=UTF-8'])
    t.strictSame(Object.keys(path.get.responses['200'].content).sort(), ['application/pdf', 'text/plain; charset=UTF-8'])
    // The download answers 304 (If-None-Match) and 412 (a stale If-Match): both listed, with both headers.
    t.ok(path.get.responses['304'], 'the 304')
    t.ok(path.get.responses['412'], 'the 412')
    // Those the path's operations share stand on the path, the others on the GET.
    const parameters = [...(path.parameters ?? []), ...(path.get.parameters ?? [])] as Array<{ $ref?: string }>
    const conditional = parameters.map(p => p.$ref).filter(r => r !== undefined && /If(None)?Match/.test(r))
    t.strictSame(conditional.sort(), ['#/components/parameters/IfMatch', '#/components/parameters/IfNoneMatch'], 'If-Match and If-None-Match')
  })
})

t.test('dispositionOf: an ASCII filename, with filename* for other names', async t => {
  t.equal(dispositionOf(null), 'attachment')
  t.equal(dispositionOf('a b.pdf'), 'attachment; filename="a b.pdf"')
  t.equal(dispositionOf('é.pdf'), 'attachment; filename="?.pdf"; filename*=UTF-8\'\'%C3%A9.pdf')
})
