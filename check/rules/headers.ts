// Headers: the request headers a service must check, and what it echoes (conventions: Headers).
import { answering, contextOf, fail, notApplicable, notChecked, pass, refusedCredentials, statusFault, statusShown, type Context, type Outcome } from '../context.js'
import type { Exchange } from '../types.js'
import type { Rule } from './rule.js'
import { noteCreated } from './writes.js'

const HEADERS = 'Headers'

/** A collection that answered the first page, or the reason there is none. */
function target (ctx: Context): string | Outcome {
  const s = answering(ctx)
  if (s !== undefined) return s.collection.path
  return ctx.samples[0] === undefined ? notApplicable('no collection to probe') : notChecked(`no collection answered a plain GET (${statusShown(ctx.samples[0].exchange.response.status)})`)
}

/**
 * Without a document the POST probes go to a collection that may take no POST: its 405 is the
 * right answer, and says nothing of the header the probe is about.
 */
function takesNoPost (ctx: Context, ex: Exchange): boolean {
  return ctx.model.documentSource === null && ex.response.status === 405
}

export const headerRules: Rule[] = [
  {
    id: 'headers.user-agent',
    section: HEADERS,
    title: 'a request without a valid User-Agent is refused with 403',
    async run (ctx) {
      const path = target(ctx)
      if (typeof path !== 'string') return path
      for (const ua of [null, 'svc-conventions-check']) {
        const ex = await ctx.http.send({ path, userAgent: ua })
        const fault = statusFault(ex, 403)
        if (fault !== null) return fail(`${ua === null ? 'without a User-Agent' : `with User-Agent "${ua}" (no version)`}: ${fault}`, ex)
      }
      return pass()
    }
  },
  {
    id: 'headers.accept',
    section: HEADERS,
    title: 'an Accept without JSON is a 406; JSON wins when listed with others',
    async run (ctx) {
      const path = target(ctx)
      if (typeof path !== 'string') return path
      const refused = await ctx.http.send({ path, headers: { accept: 'application/vnd.svc-conventions-check-none+xml' } })
      const fault = statusFault(refused, 406)
      if (fault !== null) return fail(`Accept without JSON: ${fault}`, refused)
      const mixed = await ctx.http.send({ path, headers: { accept: 'text/html;q=0.9, application/json;q=0.5' } })
      if (mixed.response.status !== 200 || !/^application\/json\b/i.test(mixed.response.headers['content-type'] ?? '')) return fail('Accept listing JSON among others: expected 200 application/json', mixed)
      return pass()
    }
  },
  {
    id: 'headers.content-type',
    section: HEADERS,
    title: 'a body of an unsupported Content-Type is refused with 415',
    async run (ctx) {
      const c = ctx.model.collections.find(c => c.create !== null) ?? (ctx.model.documentSource === null ? ctx.model.collections[0] : undefined)
      if (c === undefined) return notApplicable('no collection takes a POST in the document')
      // Not JSON and not an entity: a service that does not refuse it cannot create anything from it.
      const ex = await ctx.http.send({ method: 'POST', path: c.path, headers: { 'content-type': 'text/plain; charset=UTF-8' }, body: 'svc-conventions check: this body must be refused with 415', creates: ctx.writes })
      noteCreated(ctx, c, ex)
      if (takesNoPost(ctx, ex)) return notApplicable(`POST ${c.path} answers 405: the collection takes no POST`)
      const refused = refusedCredentials(ctx, ex, 'write')
      if (refused !== null) return refused
      const fault = statusFault(ex, 415)
      return fault === null ? pass() : fail(`POST text/plain: ${fault}`, ex)
    }
  },
  {
    id: 'headers.request-id',
    section: HEADERS,
    title: 'X-Request-ID is echoed and becomes the problem\'s requestId; without it a requestId is generated',
    async run (ctx) {
      const path = `/svc-conventions-check-${Math.random().toString(36).slice(2, 8)}`
      const id = `svc-check-${crypto.randomUUID()}`
      const sent = await ctx.http.send({ path, headers: { 'x-request-id': id } })
      if (sent.response.headers['x-request-id'] !== id) return fail(`X-Request-ID ${id} is not echoed`, sent)
      if ((sent.response.json as { requestId?: unknown } | undefined)?.requestId !== id) return fail('the problem\'s requestId is not the X-Request-ID sent', sent)
      const generated = await ctx.http.send({ path })
      const requestId = (generated.response.json as { requestId?: unknown } | undefined)?.requestId
      if (typeof requestId !== 'string' || requestId === '') return fail('without X-Request-ID the problem has no generated requestId', generated)
      return pass()
    }
  },
  {
    id: 'headers.execution-context',
    section: HEADERS,
    title: 'Svc-Execution-Context: an invalid value is a 400; a valid one is echoed',
    async run (ctx) {
      const path = target(ctx)
      if (typeof path !== 'string') return path
      const bad = await ctx.http.send({ path, headers: { 'svc-execution-context': 'Not Valid!' } })
      const fault = statusFault(bad, 400)
      if (fault !== null) return fail(`an invalid Svc-Execution-Context: ${fault}`, bad)
      const good = await ctx.http.send({ path, headers: { 'svc-execution-context': 'preprod' } })
      if (good.response.status !== 200) return fail('Svc-Execution-Context: preprod (a well-known value) was not served', good)
      if (good.response.headers['svc-execution-context'] === undefined) return fail('Svc-Execution-Context is not echoed in the response', good)
      return pass()
    }
  },
  {
    id: 'headers.service',
    section: HEADERS,
    title: 'Svc-Service: a value without a UUID id is a 400',
    async run (ctx) {
      const path = target(ctx)
      if (typeof path !== 'string') return path
      const ex = await ctx.http.send({ path, headers: { 'svc-service': 'id=not-a-uuid; name=svc-conventions-check' } })
      const fault = statusFault(ex, 400)
      return fault === null ? pass() : fail(`an invalid Svc-Service: ${fault}`, ex)
    }
  },
  {
    id: 'headers.idempotency-key',
    section: HEADERS,
    title: 'Svc-Idempotency-Key: a malformed key is a 400 naming the header',
    async run (ctx) {
      const c = ctx.model.collections.find(c => c.create !== null) ?? (ctx.model.documentSource === null ? ctx.model.collections[0] : undefined)
      if (c === undefined) return notApplicable('no collection takes a POST in the document')
      // An empty object creates nothing on a service that does not check the key either.
      const ex = await ctx.http.send({ method: 'POST', path: c.path, headers: { 'content-type': 'application/json', 'svc-idempotency-key': 'Not A Key' }, body: '{}', creates: ctx.writes })
      noteCreated(ctx, c, ex)
      if (takesNoPost(ctx, ex)) return notApplicable(`POST ${c.path} answers 405: the collection takes no POST`)
      const refused = refusedCredentials(ctx, ex, 'write')
      if (refused !== null) return refused
      const fault = statusFault(ex, 400)
      if (fault !== null) return fail(`a malformed Svc-Idempotency-Key: ${fault}`, ex)
      if (!contextOf(ex).some(c => String(c.field).toLowerCase() === 'svc-idempotency-key')) return fail('the 400 has no context item naming Svc-Idempotency-Key', ex)
      return pass()
    }
  },
  {
    id: 'headers.custom-names',
    section: HEADERS,
    title: 'custom response headers start with Svc- (never X-), at most 50 characters of [a-zA-Z0-9-]',
    observes: true,
    async run (ctx) {
      // Standard or infrastructure headers that happen to start with X- (conventions: Custom headers).
      const known = /^x-(request-id|forwarded-.*|content-type-options|frame-options|xss-protection|dns-prefetch-control|download-options|permitted-cross-domain-policies|powered-by|ratelimit-.*|real-ip)$/
      for (const ex of ctx.http.exchanges) {
        for (const name of Object.keys(ex.response.headers)) {
          if ((name.startsWith('x-') && !known.test(name)) || (name.startsWith('svc-') && (name.length > 50 || !/^[a-z0-9-]+$/.test(name)))) {
            return fail(`the response header ${name} is not of the convention's form`, ex)
          }
        }
      }
      return pass()
    }
  },
  {
    id: 'headers.location',
    section: HEADERS,
    title: 'Location is sent only with 201 or a 3xx',
    observes: true,
    async run (ctx) {
      const ex = ctx.http.exchanges.find(e => e.response.headers.location !== undefined && e.response.status !== 201 && (e.response.status < 300 || e.response.status > 399))
      return ex === undefined ? pass() : fail(`Location with a ${ex.response.status}`, ex)
    }
  },
  {
    id: 'headers.content-language',
    section: HEADERS,
    title: 'Content-Language, when sent, lists language tags (default en-US when absent)',
    observes: true,
    async run (ctx) {
      // BCP 47 in its common form: a 2–3 letter language, then subtags of 1–8 letters or digits.
      const tag = /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$/
      const sent = ctx.http.exchanges.filter(e => e.response.headers['content-language'] !== undefined)
      if (sent.length === 0) return notApplicable('no answer carried Content-Language (en-US is meant)')
      const bad = sent.find(e => !(e.response.headers['content-language'] ?? '').split(',').every(t => tag.test(t.trim())))
      return bad === undefined ? pass() : fail(`Content-Language ${JSON.stringify(bad.response.headers['content-language'])} is not a list of language tags`, bad)
    }
  }
]
