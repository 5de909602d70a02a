import type { RouteOptions } from 'fastify'

const str = (description: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ type: 'string', description, ...extra })

/**
 * The request headers of the convention, documented on every operation (conventions:
 * Headers). Declared route headers win; read-only methods get no idempotency key.
 */
export function conventionHeaders (route: RouteOptions, declared: Record<string, unknown> | undefined): Record<string, unknown> {
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(m => m.toUpperCase())
  const readOnly = methods.every(m => m === 'GET' || m === 'HEAD')
  const config = (route.config ?? {}) as { conventions?: unknown }
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  if (config.conventions !== false) {
    properties['user-agent'] = str('`<product>/<major-version> <comment>`; required (403 without it).', { pattern: '^\\S+/\\d' })
    required.push('user-agent')
    properties['x-request-id'] = str('Correlation id; becomes the problem `requestId` and is echoed.', { maxLength: 200 })
    properties['svc-execution-context'] = str('Data partition (`prod` when absent); echoed when sent.', { pattern: '^[a-z0-9_-]{1,100}$' })
    properties['svc-service'] = str('Calling service: `id=<uuid>; name=<name>`.')
    if (!readOnly) properties['svc-idempotency-key'] = str('Client-generated key making a retry safe.', { pattern: '^[a-z0-9-]{20,255}$' })
  }
  const base = (declared ?? {}) as { properties?: Record<string, unknown>, required?: string[] }
  return {
    type: 'object',
    properties: { ...properties, ...base.properties },
    required: [...new Set([...required, ...(base.required ?? [])])]
  }
}
