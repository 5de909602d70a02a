import { acceptRule, type AcceptRule } from './accept.js'
import type { Consumes } from './content-type.js'
import { isJsonSuffix } from './content-type.js'
import { EXECUTION_CONTEXT_PATTERN, type ExecutionContextOptions, type ExecutionContextRule } from './execution-context.js'
import { isUtf8, parseConcreteMediaType, type MediaType, type MediaTypes } from '../shared/media-type.js'
import type { ServiceHeaderOptions } from './service-header.js'
import { formatServiceHeader, parseServiceHeader, type ServiceDescription } from '../shared/service-header.js'
import { userAgentRule, type UserAgentOptions, type UserAgentRule } from './user-agent.js'
import { optionChecks, refuseUnknownOptions, type OptionChecks, type OptionKeys } from '../shared/options.js'

/** Options of the `conventions` plugin. `false` switches a rule off everywhere. */
export interface ConventionsOptions {
  /** Refuse HTTP/1.0 (and older), an HTTP/1.1 request without Host, and a one-value header (Host, Authorization, Content-Type…) sent twice, each with a 400 problem. Default `true`. */
  httpVersion?: boolean
  /** Require a valid User-Agent, else 403. Default `true` (lenient version, comment optional). */
  userAgent?: boolean | UserAgentOptions
  /** Negotiate Accept against `produces`, else 406. Default `true`. */
  accept?: boolean
  /** Media types routes produce, in preference order. Default `['application/json']`. */
  produces?: readonly string[]
  /** Check the request Content-Type against `contentTypes`, else 415. Default `true`. */
  contentType?: boolean
  /** Media types routes accept in bodies. Default `['application/json']`. */
  contentTypes?: readonly string[]
  /** `+json` types parsed like `application/json` (besides `+json` entries of `contentTypes`). Default `['application/merge-patch+json']`. */
  jsonTypes?: readonly string[]
  /** Check `Svc-Execution-Context` into `request.executionContext`. Default `true` (`prod`, `preprod`; absent means `prod`). */
  executionContext?: boolean | ExecutionContextOptions
  /** Check `Svc-Service` into `request.callingService`. Default `true` (no registry, no own header sent). */
  serviceHeader?: boolean | ServiceHeaderOptions
  /** Check the `Svc-Idempotency-Key` format into `request.idempotencyKey`. Default `true`. */
  idempotencyKey?: boolean
  /** `Content-Language` set on every response (a handler may set its own). Default `'en-US'`; `false` sends none. */
  contentLanguage?: string | false
  /** Check custom header names declared by route schemas at registration. Default `true`. */
  headerNames?: boolean | { allow?: readonly string[] }
}

/** `routeOptions.config.conventions`: `false` switches every rule off for the route. */
export interface ConventionsRouteConfig {
  httpVersion?: false
  userAgent?: false
  accept?: false
  /** Media types this route produces, replacing the plugin's `produces`. */
  produces?: readonly string[]
  contentType?: false
  /** Media types this route accepts, replacing the plugin's `contentTypes`. */
  contentTypes?: readonly string[]
  executionContext?: false
  serviceHeader?: false
  idempotencyKey?: false
  /** Replaces the plugin's `contentLanguage` on this route's responses. */
  contentLanguage?: string | false
  headerNames?: false
}

/** What one route enforces; `null` or `false` is a rule switched off. */
export interface Settings {
  httpVersion: boolean
  userAgent: UserAgentRule | null
  /** The Accept rule of the route's produced types; null when Accept is not negotiated. */
  accept: AcceptRule | null
  consumes: Consumes | null
  executionContext: ExecutionContextRule | null
  serviceHeader: ServiceHeaderOptions | null
  /** The `Svc-Service` value sent on responses. */
  selfHeader: string | null
  idempotencyKey: boolean
  contentLanguage: string | null
  headerNames: ReadonlySet<string> | null
}

export const defaults = {
  produces: ['application/json'],
  contentTypes: ['application/json'],
  jsonTypes: ['application/merge-patch+json'],
  executionContexts: ['prod', 'preprod'],
  executionContext: 'prod',
  contentLanguage: 'en-US'
} as const

/** Every rule off: `config: { conventions: false }` (health checks, webhooks). */
export const OFF: Settings = {
  httpVersion: false,
  userAgent: null,
  accept: null,
  consumes: null,
  executionContext: null,
  serviceHeader: null,
  selfHeader: null,
  idempotencyKey: false,
  contentLanguage: null,
  headerNames: null
}

/** RFC 5646 language tag, simplified to its syntax of subtags. */
const LANGUAGE_TAG = /^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$/

const OPTION_KEYS: OptionKeys<ConventionsOptions> = {
  httpVersion: true, userAgent: true, accept: true, produces: true, contentType: true, contentTypes: true, jsonTypes: true, executionContext: true, serviceHeader: true, idempotencyKey: true, contentLanguage: true, headerNames: true
}
const USER_AGENT_KEYS: OptionKeys<UserAgentOptions> = { strictVersion: true, requireComment: true, validate: true }
const EXECUTION_CONTEXT_KEYS: OptionKeys<ExecutionContextOptions> = { supported: true, extra: true, default: true }
const SERVICE_HEADER_KEYS: OptionKeys<ServiceHeaderOptions> = { registry: true, self: true }
const HEADER_NAMES_KEYS: OptionKeys<{ allow?: readonly string[] }> = { allow: true }

const ROUTE_KEYS = new Set(['httpVersion', 'userAgent', 'accept', 'produces', 'contentType', 'contentTypes', 'executionContext', 'serviceHeader', 'idempotencyKey', 'contentLanguage', 'headerNames'])

const fail: OptionChecks['fail'] = optionChecks('conventions plugin').fail

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function optionalBoolean (name: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') fail(name, value, 'a boolean')
  return value !== false
}

/** `undefined`/`true` → `{}`, `false` → null, an object of `keys` → itself. */
function switchable<T> (name: string, value: unknown, keys: OptionKeys<T>): Record<string, unknown> | null {
  if (value === undefined || value === true) return {}
  if (value === false) return null
  if (!isObject(value)) fail(name, value, 'a boolean or an object')
  refuseUnknownOptions('conventions', value, keys, { path: `${name}.` })
  return value
}

function optionalFunction (name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') fail(name, value, 'a function')
}

function mediaTypes (where: string, name: string, value: unknown): MediaTypes {
  const rule = 'a non-empty array of media types such as "application/json", without wildcards'
  if (!Array.isArray(value) || value.length === 0) fail(`${where}${name}`, value, rule)
  return value.map(v => parseConcreteMediaType(v) ?? fail(`${where}${name}`, value, rule)) as unknown as MediaTypes
}

/**
 * Request media types are matched by type and a body is UTF-8 only: a parameter of one
 * (`charset=latin1`) would be ignored without a word, so none is taken but charset=utf-8.
 */
function requestTypes (where: string, name: string, value: unknown): MediaTypes {
  const types = mediaTypes(where, name, value)
  if (!types.every(mt => mt.params.every(([key, v]) => key === 'charset' && isUtf8(v)))) {
    fail(`${where}${name}`, value, 'an array of media types without parameters (charset=utf-8 aside): a request body is matched by its type, and is UTF-8')
  }
  return types
}

function names (name: string, value: unknown): string[] {
  const rule = 'an array of names of 1 to 100 characters among a-z, 0-9, _ and -'
  if (!Array.isArray(value) || !value.every(v => typeof v === 'string' && EXECUTION_CONTEXT_PATTERN.test(v))) fail(name, value, rule)
  return value
}

function contentLanguage (where: string, value: unknown): string | null {
  if (value === false) return null
  if (typeof value !== 'string' || !LANGUAGE_TAG.test(value)) fail(`${where}contentLanguage`, value, 'false or a language tag such as "en-US"')
  return value
}

function userAgent (value: unknown): UserAgentRule | null {
  const o = switchable('userAgent', value, USER_AGENT_KEYS)
  if (o === null) return null
  optionalBoolean('userAgent.strictVersion', o.strictVersion)
  optionalBoolean('userAgent.requireComment', o.requireComment)
  optionalFunction('userAgent.validate', o.validate)
  return userAgentRule(o as UserAgentOptions)
}

function executionContext (value: unknown): ExecutionContextRule | null {
  const o = switchable('executionContext', value, EXECUTION_CONTEXT_KEYS)
  if (o === null) return null
  const predicate = typeof o.supported === 'function' ? o.supported as ExecutionContextRule['predicate'] : null
  const supported = predicate === null ? names('executionContext.supported', o.supported ?? defaults.executionContexts) : []
  const all = new Set([...supported, ...names('executionContext.extra', o.extra ?? [])])
  const fallback = o.default ?? defaults.executionContext
  if (typeof fallback !== 'string' || !EXECUTION_CONTEXT_PATTERN.test(fallback) || (predicate === null && !all.has(fallback))) {
    fail('executionContext.default', fallback, 'a supported execution context name')
  }
  return { names: all, predicate, fallback }
}

/** The own `Svc-Service` value, checked by parsing what will be sent. */
function selfHeader (value: unknown): string | null {
  if (value === undefined) return null
  const rule = 'a service { id: UUID, name?: [a-z0-9-]{1,60}, attributes?: { camelCaseKey: value } }'
  if (!isObject(value) || (value.attributes !== undefined && !isObject(value.attributes))) fail('serviceHeader.self', value, rule)
  const header = formatServiceHeader(value as unknown as ServiceDescription)
  if (!parseServiceHeader(header).ok) fail('serviceHeader.self', value, rule)
  return header
}

function serviceHeader (value: unknown): { options: ServiceHeaderOptions, self: string | null } | null {
  const o = switchable('serviceHeader', value, SERVICE_HEADER_KEYS)
  if (o === null) return null
  optionalFunction('serviceHeader.registry', o.registry)
  return { options: o, self: selfHeader(o.self) }
}

function headerNames (value: unknown): ReadonlySet<string> | null {
  const o = switchable('headerNames', value, HEADER_NAMES_KEYS)
  if (o === null) return null
  const allow = o.allow ?? []
  if (!Array.isArray(allow) || !allow.every(v => typeof v === 'string')) fail('headerNames.allow', allow, 'an array of header names')
  return new Set(allow.map(v => v.toLowerCase()))
}

/** Validates the plugin's options (throwing a TypeError that names the option and its value) and resolves them. */
export function resolveOptions (opts: ConventionsOptions): { settings: Settings, jsonTypes: MediaType[] } {
  refuseUnknownOptions('conventions', opts, OPTION_KEYS)
  const accept = optionalBoolean('accept', opts.accept)
  const contentType = optionalBoolean('contentType', opts.contentType)
  const produces = mediaTypes('', 'produces', opts.produces ?? defaults.produces)
  const consumes = requestTypes('', 'contentTypes', opts.contentTypes ?? defaults.contentTypes)
  const jsonTypes = requestTypes('', 'jsonTypes', opts.jsonTypes ?? defaults.jsonTypes)
  if (!jsonTypes.every(isJsonSuffix)) fail('jsonTypes', opts.jsonTypes, 'an array of +json media types')
  const service = serviceHeader(opts.serviceHeader)
  const settings: Settings = {
    httpVersion: optionalBoolean('httpVersion', opts.httpVersion),
    userAgent: userAgent(opts.userAgent),
    accept: accept ? acceptRule(produces) : null,
    consumes: contentType ? consumes : null,
    executionContext: executionContext(opts.executionContext),
    serviceHeader: service?.options ?? null,
    selfHeader: service?.self ?? null,
    idempotencyKey: optionalBoolean('idempotencyKey', opts.idempotencyKey),
    contentLanguage: contentLanguage('', opts.contentLanguage ?? defaults.contentLanguage),
    headerNames: headerNames(opts.headerNames)
  }
  return { settings, jsonTypes: [...jsonTypes, ...consumes.filter(isJsonSuffix)] }
}

/**
 * Applies a route's `config.conventions` (anything but `undefined` and `false`, which the
 * caller maps to the plugin's settings and OFF) over the plugin's settings. A route only
 * switches rules off or reconfigures them; it cannot switch on a rule the plugin has off.
 */
export function resolveRoute (base: Settings, config: unknown, route: string): Settings {
  const where = `route ${route}: config.conventions`
  if (!isObject(config)) fail(`route ${route}: config.conventions`, config, 'false or an object')
  const s: Settings = { ...base }
  const off: string[] = []
  for (const [key, value] of Object.entries(config)) {
    if (!ROUTE_KEYS.has(key)) fail(`${where}.${key}`, value, `one of ${[...ROUTE_KEYS].join(', ')} (unknown key)`)
    if (key === 'produces') {
      const types = mediaTypes(`${where}.`, key, value)
      if (base.accept !== null) s.accept = acceptRule(types)
    } else if (key === 'contentTypes') {
      const types = requestTypes(`${where}.`, key, value)
      if (base.consumes !== null) s.consumes = types
    } else if (key === 'contentLanguage') {
      s.contentLanguage = contentLanguage(`${where}.`, value)
    } else if (value !== false) {
      fail(`${where}.${key}`, value, 'false (a route can only switch a rule off)')
    } else {
      off.push(key)
    }
  }
  // Switches apply last, so `{ produces: [...], accept: false }` stays off whatever the key order.
  for (const key of off) switchOff(s, key)
  return s
}

function switchOff (s: Settings, key: string): void {
  switch (key) {
    case 'httpVersion': s.httpVersion = false; break
    case 'userAgent': s.userAgent = null; break
    case 'accept': s.accept = null; break
    case 'contentType': s.consumes = null; break
    case 'executionContext': s.executionContext = null; break
    case 'serviceHeader': s.serviceHeader = null; s.selfHeader = null; break
    case 'idempotencyKey': s.idempotencyKey = false; break
    default: s.headerNames = null
  }
}
