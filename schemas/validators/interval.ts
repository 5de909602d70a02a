import { isDigit, allChars } from './chars.js'
import { compareDate, compareDateTime, isDate, isDateTime } from './date-time.js'
import { isDuration } from './duration.js'

function isInstant (s: string): boolean {
  return isDateTime(s) || isDate(s)
}

/**
 * ISO 8601 interval (conventions: "Interval"): `<start>/<end>`, `<start>/<duration>` or
 * `<duration>/<end>`, where start and end are both date-times or both dates and start
 * is strictly before end; optionally repeated as `R[n]/<interval>`.
 */
export function isInterval (s: string): boolean {
  let body = s
  if (s[0] === 'R') {
    const slash = s.indexOf('/')
    if (slash < 0 || !allChars(s, 1, slash, isDigit)) return false
    body = s.slice(slash + 1)
  }
  const slash = body.indexOf('/')
  if (slash < 0) return false
  const start = body.slice(0, slash)
  const end = body.slice(slash + 1)
  if (isDuration(start)) return isInstant(end)
  if (isDuration(end)) return isInstant(start)
  if (isDateTime(start) && isDateTime(end)) return compareDateTime(start, end) < 0
  return isDate(start) && isDate(end) && compareDate(start, end) < 0
}
