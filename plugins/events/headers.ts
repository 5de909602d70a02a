/** The service sending events, as `Svc-Service` names it (conventions: "Svc-Service"). */
export interface ServiceIdentity {
  /** A UUID. */
  id: string
  /** `[a-z0-9-]{1,60}`. */
  name: string
}

/** The execution context a request without `Svc-Execution-Context` runs in (conventions). */
export const PRODUCTION = 'prod'

/** What one delivery attempt needs to name in its headers. */
export interface DeliveryHeaders {
  webhookId: string
  /** Seconds since the epoch, as signed. */
  timestamp: number
  signature: string
  requestId: string | null
  ctx: string
}

/**
 * The headers of an outgoing delivery: Standard Webhooks' three, and the convention's own
 * (User-Agent of the form `<product>/<major-version> <comment>`, X-Request-ID of the change,
 * Svc-Execution-Context outside production, Svc-Service of this service).
 */
export function deliveryHeaders (d: DeliveryHeaders, service: ServiceIdentity, userAgent: string): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'webhook-id': d.webhookId,
    'webhook-timestamp': String(d.timestamp),
    'webhook-signature': d.signature,
    'svc-service': `id=${service.id}; name=${service.name}`
  }
  if (d.requestId !== null) h['x-request-id'] = d.requestId
  if (d.ctx !== PRODUCTION) h['svc-execution-context'] = d.ctx
  return h
}
