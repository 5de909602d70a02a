import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions } from 'fastify'

/*
 * A plugin registered before one it relies on fails the boot. Fastify's own check (fastify-plugin's
 * `dependencies`) says "The dependency 'svc-problem' of plugin 'svc-rate-limit' is not
 * registered": the internal names, not what to import nor what to do. The suite's plugins check
 * here instead, when they are registered, and say which plugin to register first and where it
 * comes from.
 */

function list (names: readonly string[]): string {
  return names.length === 1 ? names[0] as string : `${names.slice(0, -1).join(', ')} and ${names.at(-1) as string}`
}

/**
 * The error for `plugin` registered without `missing` (plugin folder names, in registration
 * order; each one a word, the name the public entry exports it under).
 */
export function missingDependencies (plugin: string, missing: readonly string[]): Error {
  const exports = missing
  const which = missing.length === 1 ? `the ${missing[0] as string} plugin` : `the ${list(missing)} plugins`
  const register = exports.map((e) => `await app.register(${e})`).join('; ')
  const from = missing.map((m) => `'svc-conventions/${m}'`)
  const err = new Error(`The ${plugin} plugin needs ${which} registered before it: ${register} first ` +
    `(import { ${exports.join(', ')} } from 'svc-conventions', or the default export of ${list(from)}).`)
  // Fastify's code for the same mistake, for code that checks it.
  return Object.assign(err, { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED' })
}

/** The mark a registration of `plugin` leaves on its context, shared by every copy of the suite. */
const markOf = (plugin: string): symbol => Symbol.for(`svc-conventions.registered.${plugin}`)

/**
 * `fn`, refusing first a second registration of `plugin` in the same context, where Fastify
 * would run its hooks twice or stop on a decorator or route "already added" that does not say
 * which plugin or what to do. A child context may register it again with other options for its
 * own routes, unless `alsoBelow`: a plugin that serves the whole server (the document, the CORS
 * library's catch-all route) is refused below a context that has it too.
 */
export function once<Options extends FastifyPluginOptions> (plugin: string, fn: FastifyPluginAsync<Options>, { alsoBelow = false } = {}): FastifyPluginAsync<Options> {
  const mark = markOf(plugin)
  return async function registeredOnce (fastify: FastifyInstance, opts: Options): Promise<void> {
    // fastify-plugin keeps the registration in the context it was made in; a child context
    // inherits its parent's decorations through the prototype.
    if (Object.hasOwn(fastify, mark)) {
      const again = alsoBelow ? '' : '; a child context (app.register(async (child) => { … }, { prefix })) may register it again with other options for its own routes'
      throw new Error(`The ${plugin} plugin is registered in this context already: register it once, with all its options${again}.`)
    }
    if (alsoBelow && mark in fastify) {
      throw new Error(`The ${plugin} plugin is registered already in a parent context, whose registration serves this one too: register it once.`)
    }
    fastify.decorate(mark, true)
    await fn(fastify, opts)
  }
}

/**
 * `fn` registered `once`, checking first that each of `dependencies` (plugin folder names, in
 * the order they are to be registered) was registered before `plugin` in this Fastify instance
 * or an ancestor.
 */
export function needs<Options extends FastifyPluginOptions> (plugin: string, dependencies: readonly string[], fn: FastifyPluginAsync<Options>, registration: { alsoBelow?: boolean } = {}): FastifyPluginAsync<Options> {
  return once(plugin, async function checked (fastify: FastifyInstance, opts: Options): Promise<void> {
    const missing = dependencies.filter((d) => !fastify.hasPlugin(`svc-${d}`))
    if (missing.length > 0) throw missingDependencies(plugin, missing)
    await fn(fastify, opts)
  }, registration)
}

/**
 * Throws when `plugin` is to serve routes that require the token scopes `scoped` while the auth
 * plugin, which alone enforces a route's `config.auth`, is not registered before it: every
 * caller would be let in, silently. `withoutAuth` (the plugin's option of that name) says so
 * on purpose; without scopes a route asks for nothing of the kind.
 */
export function scopesNeedAuth (fastify: FastifyInstance, plugin: string, withoutAuth: unknown, scoped: readonly string[]): void {
  if (withoutAuth !== undefined && typeof withoutAuth !== 'boolean') throw new TypeError(`${plugin} plugin: withoutAuth must be a boolean, got ${JSON.stringify(withoutAuth)}`)
  if (withoutAuth === true || scoped.length === 0 || fastify.hasPlugin('svc-auth')) return
  const err = new Error(`The ${plugin} plugin serves routes that require the token scopes ${list([...new Set(scoped)])}, which only the auth plugin checks, and it is not registered before it: every caller would be let in. ` +
    'Register it first (await app.register(auth, { verifier }); import { auth } from \'svc-conventions\'), or give the plugin withoutAuth: true when something else checks the tokens.')
  throw Object.assign(err, { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED' })
}
