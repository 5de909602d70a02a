/** Longest client-sent text quoted in full in a problem; a longer one is cut there. */
export const MAX_SHOWN = 100

/**
 * A value a client sent, as a problem quotes it: cut to `MAX_SHOWN` characters and an ellipsis,
 * so that a long header, parameter or field cannot bloat the error body.
 */
export function cutShort (value: string): string {
  return value.length > MAX_SHOWN ? value.slice(0, MAX_SHOWN) + '…' : value
}
