// Character classes of the convention's grammars, by char code: the parsers in this
// folder walk a string once with these instead of regular expressions, so no input
// can make them backtrack (conventions: "Serialization rules by type").

export function isDigit (c: number): boolean {
  return c >= 48 && c <= 57
}

export function isLower (c: number): boolean {
  return c >= 97 && c <= 122
}

export function isUpper (c: number): boolean {
  return c >= 65 && c <= 90
}

/** `[A-Za-z0-9._~-]`: the unreserved characters of RFC 3986, the convention's identifier alphabet. */
export function isIdChar (c: number): boolean {
  return isDigit(c) || isLower(c) || isUpper(c) || c === 46 || c === 95 || c === 126 || c === 45
}

/** True when every character of `s` from `from` to `to` (exclusive) passes `test`. */
export function allChars (s: string, from: number, to: number, test: (c: number) => boolean): boolean {
  for (let i = from; i < to; i++) if (!test(s.charCodeAt(i))) return false
  return true
}

/** The value of the `n` digits at `from`, or -1 when one of them is not a digit. */
export function readDigits (s: string, from: number, n: number): number {
  let v = 0
  for (let i = from; i < from + n; i++) {
    const c = s.charCodeAt(i)
    if (!isDigit(c)) return -1
    v = v * 10 + c - 48
  }
  return v
}
