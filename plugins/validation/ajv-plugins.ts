import type { Ajv } from 'ajv'

/**
 * An Ajv plugin (`ajv-keywords`, `ajv-errors`, a function of yours adding a keyword). The
 * options are `never` here so that a plugin typed with options of its own still fits.
 */
export type AjvPlugin = (ajv: Ajv, options?: never) => unknown

/** A plugin, or a plugin with its options: the forms of Fastify's `ajv.plugins`. */
export type AjvPluginEntry = AjvPlugin | readonly [AjvPlugin, unknown]

/** Throws a TypeError naming the first entry that is neither form. */
export function checkAjvPlugins (plugins: unknown): void {
  if (plugins === undefined) return
  if (!Array.isArray(plugins)) throw new TypeError(`validation plugin: plugins must be an array of Ajv plugins, got ${typeof plugins === 'function' ? 'a function' : JSON.stringify(plugins)}`)
  plugins.forEach((entry: unknown, i) => {
    const plugin = Array.isArray(entry) && entry.length === 2 ? entry[0] as unknown : entry
    if (typeof plugin !== 'function') throw new TypeError(`validation plugin: plugins[${i}] must be an Ajv plugin or [plugin, options], got ${JSON.stringify(entry)}`)
  })
}

/** Applies the plugins to one Ajv instance, in order. */
export function addAjvPlugins (ajv: Ajv, plugins: readonly AjvPluginEntry[] = []): void {
  for (const entry of plugins) {
    if (typeof entry === 'function') entry(ajv)
    else entry[0](ajv, entry[1] as never)
  }
}
