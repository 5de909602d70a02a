/** Longest `X-Request-ID` honoured by default; a longer one is replaced by a generated id. */
export const MAX_REQUEST_ID_LENGTH = 200

/**
 * The caller's request id when it can be used as sent (conventions: Errors, rule 4): a
 * non-empty value of at most `max` characters; undefined otherwise, and a generated id is used.
 */
export function sentRequestId (value: unknown, max: number = MAX_REQUEST_ID_LENGTH): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined
}
