// Errors: every refusal the check provoked, read again once it is over (conventions: Errors).
import { contextOf, fail, notApplicable, pass, problemFault } from '../context.js'
import type { Exchange } from '../types.js'
import type { Rule } from './rule.js'

const ERRORS = 'Errors'
const CODE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/
// Stack frames and driver words: what a body must never show (Errors 7).
const INTERNALS = /\n\s+at |node_modules|SQLSTATE|Traceback \(most recent call last\)|\bat [\w$.]+ \([^)]*:\d+:\d+\)|\bgoroutine \d+ \[/

/** The body as sent, and each string of it as JSON decodes it (a stack in JSON has `\\n`, not a line break). */
function texts (ex: Exchange): string[] {
  const out = [ex.response.text]
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v)
    else if (Array.isArray(v)) v.forEach(walk)
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk)
  }
  walk(ex.response.json)
  return out
}

export const errorRules: Rule[] = [
  {
    id: 'errors.problem-body',
    section: ERRORS,
    title: 'every 4xx and 5xx is application/problem+json with title, status (the HTTP status) and requestId',
    observes: true,
    async run (ctx) {
      const refusals = ctx.http.exchanges.filter(e => e.response.status >= 400 && e.request.method !== 'HEAD')
      if (refusals.length === 0) return notApplicable('no 4xx or 5xx was answered')
      for (const ex of refusals) {
        const fault = problemFault(ex)
        if (fault !== null) return fail(`${ex.response.status}: ${fault} (${refusals.length} refusals seen)`, ex)
      }
      return pass()
    }
  },
  {
    id: 'errors.context-codes',
    section: ERRORS,
    title: 'context items have a message and a CAPITAL_SNAKE_CASE code',
    observes: true,
    async run (ctx) {
      const withContext = ctx.http.exchanges.filter(e => e.response.status >= 400 && contextOf(e).length > 0)
      if (withContext.length === 0) return notApplicable('no problem with context items was answered')
      for (const ex of withContext) {
        for (const item of contextOf(ex)) {
          if (typeof item.message !== 'string' || item.message === '') return fail('a context item without a message', ex)
          if (item.code !== undefined && item.code !== null && !CODE.test(String(item.code))) return fail(`the context code ${JSON.stringify(item.code)} is not CAPITAL_SNAKE_CASE`, ex)
        }
      }
      return pass()
    }
  },
  {
    id: 'errors.no-internals',
    section: ERRORS,
    title: 'refusals show no implementation details (stack frames, SQL states)',
    observes: true,
    async run (ctx) {
      const ex = ctx.http.exchanges.find(e => e.response.status >= 400 && texts(e).some(text => INTERNALS.test(text)))
      return ex === undefined ? pass() : fail('the body shows implementation details', ex)
    }
  },
  {
    id: 'errors.server-errors',
    section: ERRORS,
    title: '5xx is never used for validation or logic errors; 500 and 429 are retriable',
    unobservable: 'provoking a fault or the rate limit on purpose is not safe on a running service'
  }
]
