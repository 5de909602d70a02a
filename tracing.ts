import { createRequire } from 'node:module'
import type { FastifyInstance, FastifyPluginCallback } from 'fastify'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node'

/*
 * OpenTelemetry tracing of the reference service, off unless configured: a span per request
 * (@fastify/otel) with its hooks and handler, and a span per SQL statement (the pg
 * instrumentation) beneath it. Each request span carries the route (`http.route`), the
 * convention's requestId and the execution context.
 */

export interface TracingOptions {
  /** OTLP/HTTP endpoint the spans are sent to, batched (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  endpoint?: string
  /** An exporter of your own, each span sent as it ends (tests use an in-memory one). */
  exporter?: SpanExporter
}

export interface Tracing {
  /** The Fastify plugin that makes the request spans; register it before any route. */
  plugin: FastifyPluginCallback
  /** Sends what is pending and stops tracing. */
  shutdown: () => Promise<void>
}

/** Span attributes of the convention, beside @fastify/otel's own. */
export const REQUEST_ID_ATTRIBUTE = 'svc.request_id'
export const EXECUTION_CONTEXT_ATTRIBUTE = 'svc.execution_context'

export function startTracing (opts: TracingOptions): Tracing {
  const exporter = opts.exporter ?? new OTLPTraceExporter({ url: new URL('v1/traces', opts.endpoint?.endsWith('/') === true ? opts.endpoint : `${opts.endpoint ?? ''}/`).href })
  const provider = new NodeTracerProvider({ spanProcessors: [opts.exporter === undefined ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter)] })
  // Also the global context manager, so the spans of a request's SQL find their parent.
  provider.register()
  const fastifyOtel = new FastifyOtelInstrumentation({ registerOnInitialization: false })
  const disable = registerInstrumentations({ tracerProvider: provider, instrumentations: [new PgInstrumentation(), fastifyOtel] })
  // The instrumentation patches pg when it is required; the store imported it already, so it
  // is required again here, through the hook (the patch applies to the classes in place).
  createRequire(import.meta.url)('pg')
  return {
    plugin: fastifyOtel.plugin(),
    async shutdown () {
      disable()
      await provider.shutdown()
    }
  }
}

/** Adds the convention's attributes to each request span, once the conventions plugin has read them. */
export function traceAttributes (app: FastifyInstance): void {
  app.addHook('onSend', async (request) => {
    const { span } = request.opentelemetry()
    span?.setAttributes({ [REQUEST_ID_ATTRIBUTE]: request.requestId, [EXECUTION_CONTEXT_ATTRIBUTE]: request.executionContext })
  })
}
