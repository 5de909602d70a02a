/** Every consumer path starts here (conventions: Webhook consumer endpoints). */
export const WEBHOOK_PREFIX = '/_webhooks/'

// Conventions, Webhook consumer endpoints: "Segments use kebab-case".
const KEBAB_CASE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

function show (value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}

/**
 * The consumer path of a producer and event kind: `/_webhooks/<producer>/`,
 * `/_webhooks/<producer>/<event-kind>`, or the generic `/_webhooks/<event-name>` when
 * only the event is given. Throws a TypeError naming the path when a segment is not
 * kebab-case, or when neither is given.
 */
export function webhookPath (producer: unknown, event: unknown): string {
  if (producer === undefined && event === undefined) {
    throw new TypeError(`registerWebhook: producer or event is required, for ${WEBHOOK_PREFIX}<producer>/<event-kind> or ${WEBHOOK_PREFIX}<event-name>`)
  }
  for (const [name, value] of [['producer', producer], ['event', event]] as const) {
    if (value !== undefined && typeof value !== 'string') throw new TypeError(`registerWebhook: ${name} must be a kebab-case string, got ${show(value)}`)
  }
  const segments = producer === undefined ? [event as string] : [producer as string, ...(event === undefined ? [] : [event as string])]
  const path = producer === undefined ? `${WEBHOOK_PREFIX}${event as string}` : `${WEBHOOK_PREFIX}${producer as string}/${(event as string | undefined) ?? ''}`
  for (const segment of segments) {
    if (!KEBAB_CASE.test(segment)) {
      throw new TypeError(`registerWebhook: the path ${path} has the segment ${show(segment)}, which is not kebab-case (a-z, 0-9, single hyphens between words)`)
    }
  }
  return path
}
