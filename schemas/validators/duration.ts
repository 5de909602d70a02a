import { isDigit } from './chars.js'

const DATE_DESIGNATORS = 'YMWD'
const TIME_DESIGNATORS = 'HMS'

/**
 * ISO 8601 duration `PnYnMnWnDTnHnMnS` (conventions: "Duration"): starts with `P`; each
 * designator at most once and in that order, always after a number; `T` only before at
 * least one of H, M, S; a decimal fraction (with `.`) only on the last component.
 * Weeks may be combined with the other designators (ISO 8601-1:2019).
 */
export function isDuration (s: string): boolean {
  const n = s.length
  if (n < 3 || s[0] !== 'P') return false
  let i = 1
  let designators = DATE_DESIGNATORS
  let last = -1
  let fraction = false
  while (i < n) {
    if (s[i] === 'T') {
      if (designators === TIME_DESIGNATORS) return false
      designators = TIME_DESIGNATORS
      last = -1
      if (++i === n) return false
    }
    if (fraction) return false
    const start = i
    while (i < n && isDigit(s.charCodeAt(i))) i++
    if (i === start) return false
    if (s[i] === '.') {
      const fracStart = ++i
      while (i < n && isDigit(s.charCodeAt(i))) i++
      if (i === fracStart) return false
      fraction = true
    }
    if (i === n) return false
    const index = designators.indexOf(s.charAt(i))
    if (index <= last) return false
    last = index
    i++
  }
  return true
}
