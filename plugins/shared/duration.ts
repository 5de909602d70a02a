import { plural } from './plural.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

const UNIT_NAMES: Array<[number, string[]]> = [
  [1, ['ms', 'millisecond', 'milliseconds']],
  [SECOND, ['s', 'sec', 'secs', 'second', 'seconds']],
  [MINUTE, ['m', 'min', 'mins', 'minute', 'minutes']],
  [HOUR, ['h', 'hr', 'hrs', 'hour', 'hours']],
  [DAY, ['d', 'day', 'days']]
]
const UNITS = new Map(UNIT_NAMES.flatMap(([size, names]) => names.map((name) => [name, size] as const)))

const DURATION = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i

/**
 * Milliseconds of a duration such as `'1 minute'`, `'30s'`, `'1.5 hours'` or `'500'`
 * (a bare number is milliseconds, as in @fastify/rate-limit); null when it is none.
 */
export function parseDuration (value: string): number | null {
  const match = DURATION.exec(value)
  if (match === null) return null
  const unit = match[2] === undefined ? 1 : UNITS.get(match[2].toLowerCase())
  if (unit === undefined) return null
  return Math.round(Number(match[1]) * unit)
}

/** A window for people: the largest unit that divides it (`1 minute`, `90 seconds`, `1500 milliseconds`). */
export function formatDuration (ms: number): string {
  for (const [size, name] of [[DAY, 'day'], [HOUR, 'hour'], [MINUTE, 'minute'], [SECOND, 'second']] as const) {
    if (ms % size === 0) return plural(ms / size, name)
  }
  return plural(ms, 'millisecond')
}
