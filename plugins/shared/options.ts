/*
 * A misspelt option (`userAgnt: false`, @fastify/cors's `origin` for `origins`) would otherwise
 * be ignored and the plugin run with its default: the opposite of what was asked. Every
 * exported plugin calls this first, so a key it does not know fails the boot, naming it.
 */

/** Keys Fastify's `register(plugin, opts)` reads itself; they reach the plugin with its options. */
const REGISTER_KEYS: ReadonlySet<string> = new Set(['prefix', 'logLevel', 'logSerializers'])

/** Every option key of `T`, listed once: a key added to the type and not here is a compile error. */
export type OptionKeys<T> = { readonly [K in keyof Required<T>]: true }

/** Optimal string alignment distance: edits, with a swap of two neighbours as one. */
function distance (a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i])
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[]
    const above = rows[i - 1] as number[]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      row[j] = d
    }
  }
  return (rows[a.length] as number[])[b.length] as number
}

/** The known key nearest to `key`, when it is near enough to be the one meant (a third of its letters at most). */
export function closestKey (key: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(1, Math.floor(Math.max(key.length, 3) / 3)) ? best : undefined
}

/** Where the options checked sit: a nested object (`path: 'verifier.'`), a route (`where: 'route GET /x: '`). */
export interface OptionsPlace {
  /** Prefix of the message, e.g. `route PUT /x: `. */
  where?: string
  /** The keys' path, e.g. `config.conditional.`; empty for the plugin's own options. */
  path?: string
}

/**
 * Throws a TypeError when `opts` is not an object, or has a key outside `known` (and, for the
 * plugin's own options, Fastify's register keys), naming the plugin, the key, the closest
 * known key and all of them: `conventions plugin: unknown option userAgnt (did you mean
 * userAgent?); the options are httpVersion, userAgent, …`.
 */
export function refuseUnknownOptions (plugin: string, opts: unknown, known: Readonly<Record<string, true>>, place: OptionsPlace = {}): void {
  const { where = '', path = '' } = place
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    throw new TypeError(`${plugin} plugin: ${where}${path === '' ? 'the options' : path.slice(0, -1)} must be an object, got ${JSON.stringify(opts) ?? String(opts)}`)
  }
  refuseUnknownKeys(`${plugin} plugin: ${where}`, opts, known, path)
}

/**
 * Throws a TypeError when object `value` has a key outside `known` (Fastify's register keys
 * aside for a plugin's own options, `path` empty): `<prefix>unknown option <path><key> (did
 * you mean <path><closest>?); <what> takes …`. For options checked where the message names
 * its own place (a route's config).
 */
export function refuseUnknownKeys (prefix: string, value: object, known: Readonly<Record<string, true>>, path = ''): void {
  const keys = Object.keys(known)
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(known, key) || (path === '' && REGISTER_KEYS.has(key))) continue
    const near = closestKey(key, keys)
    const list = path === '' ? `the options are ${keys.join(', ')}` : `${path.slice(0, -1)} takes ${keys.join(', ')}`
    throw new TypeError(`${prefix}unknown option ${path}${key}${near === undefined ? '' : ` (did you mean ${path}${near}?)`}; ${list}`)
  }
}

/*
 * Every boot error about an option reads the same way, whichever plugin or builder throws it:
 * `<owner>: <option> must be <rule>, got <value>`, so a reader finds the option to change and
 * what it was given. Each owner makes its checks once: `const { fail } = optionChecks('bulk plugin')`.
 */

/** A value as a boot error quotes it: its JSON where it has one, else its text; a function is named, not printed. */
export function shownValue (value: unknown): string {
  if (typeof value === 'function') return 'a function'
  if (value instanceof RegExp || (typeof value === 'number' && !Number.isFinite(value))) return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    // A BigInt or a cycle.
    return String(value)
  }
}

/**
 * The longest delay a Node timer waits, in milliseconds (2^31 - 1, about 24.8 days):
 * `setTimeout` and `setInterval` take a longer one as 1 ms, with only a TimeoutOverflowWarning,
 * so a wait meant for weeks would end at once, and a poll would spin.
 */
export const MAX_TIMER_MILLIS = 2_147_483_647

/** The rule of an option of milliseconds that reaches a timer, as its boot error states it. */
export const TIMER_MILLIS_RULE = `a positive integer of milliseconds up to ${MAX_TIMER_MILLIS} (about 24.8 days, the longest a timer waits)`

export interface OptionChecks {
  /** Throws `<owner>: <option> must be <rule>, got <value>`; `option` carries its path (`resources.x.actions`) or place (`route GET /x: config.x`). */
  fail: (option: string, value: unknown, rule: string) => never
  /** `value` when it is a positive safe integer; else fails with `rule` (default "a positive integer"). */
  positiveInteger: (option: string, value: unknown, rule?: string) => number
  /**
   * `value` when it is an integer of milliseconds a timer can wait, 1 to `MAX_TIMER_MILLIS`, or 0
   * when `zero` says what 0 means (`'never'`); else fails with `TIMER_MILLIS_RULE`. For every
   * option that reaches `setTimeout` or `setInterval`, directly or after arithmetic.
   */
  timerMillis: (option: string, value: unknown, zero?: string) => number
}

/** The checks of one owner of options: `'bulk plugin'`, `'defineResource'`, `'Decimal'`. */
export function optionChecks (owner: string): OptionChecks {
  const fail = (option: string, value: unknown, rule: string): never => {
    throw new TypeError(`${owner}: ${option} must be ${rule}, got ${shownValue(value)}`)
  }
  const positiveInteger = (option: string, value: unknown, rule = 'a positive integer'): number => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) fail(option, value, rule)
    return value as number
  }
  const timerMillis = (option: string, value: unknown, zero?: string): number => {
    const least = zero === undefined ? 1 : 0
    if (typeof value !== 'number' || !Number.isInteger(value) || value < least || value > MAX_TIMER_MILLIS) {
      fail(option, value, zero === undefined ? TIMER_MILLIS_RULE : `0 (${zero}) or ${TIMER_MILLIS_RULE}`)
    }
    return value as number
  }
  return { fail, positiveInteger, timerMillis }
}
