/**
 * A client-sent value as quoted in a problem detail: cut to 100 characters so a long
 * header cannot bloat the error body (the problem schema caps `detail` at 2000).
 */
export function shown (value: string): string {
  return JSON.stringify(value.length > 100 ? value.slice(0, 100) + '…' : value)
}
