/**
 * HTTP-date (RFC 9110 §5.6.7), as `If-Unmodified-Since` carries it: the preferred IMF-fixdate
 * (`Sun, 06 Nov 1994 08:49:37 GMT`, what `Date#toUTCString` writes) and the two obsolete
 * forms a recipient must still accept, rfc850-date (`Sunday, 06-Nov-94 08:49:37 GMT`) and
 * asctime-date (`Sun Nov  6 08:49:37 1994`). The grammar is case-sensitive. The day name is
 * not checked against the date, as the RFC does not ask recipients to.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const DAY_LONG = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)'
const MONTH = `(${MONTHS.join('|')})`
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})'

const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`)
const RFC850 = new RegExp(`^${DAY_LONG}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`)
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`)

/**
 * The instant `value` names, in milliseconds since the epoch (a whole second), or null when it
 * is not an HTTP-date or names no real time (`31 Feb`, `25:00:00`). A leap second (`:60`) is
 * read as the second before it. `now` places rfc850-date's two-digit year: one that would be
 * more than 50 years ahead is the latest past year with those digits (§5.6.7), and one more
 * than 50 years behind is in the next century.
 */
export function parseHttpDate (value: string, now: number = Date.now()): number | null {
  let m = IMF_FIXDATE.exec(value)
  if (m !== null) return instant(Number(m[3]), m[2] as string, Number(m[1]), m[4] as string, m[5] as string, m[6] as string)
  m = RFC850.exec(value)
  if (m !== null) {
    // The year of this century with those digits, moved a century back when that is more
    // than 50 years ahead, or forward when more than 50 behind: the one nearest `now`.
    const [, day, month, yy, hh, mm, ss] = m as unknown as string[]
    const at = (year: number): number | null => instant(year, month as string, Number(day), hh as string, mm as string, ss as string)
    const current = new Date(now).getUTCFullYear()
    const year = current - (current % 100) + Number(yy)
    const guess = at(year)
    if (guess === null) return null
    if (guess > yearsFrom(now, 50)) return at(year - 100)
    if (guess < yearsFrom(now, -50)) return at(year + 100)
    return guess
  }
  m = ASCTIME.exec(value)
  if (m !== null) {
    // date3's day is two digits, or a space and one digit.
    return instant(Number(m[6]), m[1] as string, Number((m[2] as string).trim()), m[3] as string, m[4] as string, m[5] as string)
  }
  return null
}

/** `now` moved by `years` calendar years. */
function yearsFrom (now: number, years: number): number {
  const d = new Date(now)
  d.setUTCFullYear(d.getUTCFullYear() + years)
  return d.getTime()
}

function instant (year: number, month: string, day: number, hh: string, mm: string, ss: string): number | null {
  const hour = Number(hh)
  const minute = Number(mm)
  const second = Math.min(Number(ss), 59)
  if (hour > 23 || minute > 59 || Number(ss) > 60) return null
  const date = new Date(0)
  date.setUTCFullYear(year, MONTHS.indexOf(month), day)
  // 31 Feb rolls into March: refused rather than moved.
  if (date.getUTCDate() !== day) return null
  date.setUTCHours(hour, minute, second, 0)
  return date.getTime()
}
