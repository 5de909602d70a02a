import { cutShort } from '../shared/cut-short.js'

/**
 * A client-sent value as quoted in a problem detail: cut short so a long header cannot bloat
 * the error body (the problem schema caps `detail` at 2000).
 */
export function shown (value: string): string {
  return JSON.stringify(cutShort(value))
}
