import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { Id, Int32, problems, type ServedResource } from '../index.js'
import { registerWebhook, standardWebhooks } from 'svc-conventions/webhooks'

/** The scanner's payload (reference-service.md, Webhooks); the producer owns it, so extra fields pass. */
export const DocumentScanned = Type.Object({
  documentId: Id(),
  pageCount: Int32({ minimum: 0, maximum: 100000 }),
  fingerprint: Type.String({ minLength: 1, maxLength: 255 })
})

/**
 * `POST /_webhooks/scanner/document-scanned`: Standard Webhooks signatures, HTTPS only,
 * deduplicated by `webhook-id` in the same statement as the change it makes, which goes
 * through the documents' write path like any other.
 */
export function registerScannerWebhook (fastify: FastifyInstance, secret: string): void {
  const documents = fastify.resources.get('documents') as ServedResource
  registerWebhook(fastify, {
    producer: 'scanner',
    event: 'document-scanned',
    verifier: standardWebhooks({ secrets: [secret] }),
    schema: DocumentScanned,
    // One statement: the document's change, its event and the delivery's id (writer.one); the
    // answer has no body, so the statement returns the document's ETag alone.
    apply: async (event, once, request) => {
      const call = { ctx: request.executionContext, by: 'scanner', atomic: true, requestId: request.requestId }
      const outcome = await documents.writer.one(documents.store, call, {
        action: 'set', id: event.documentId, values: { pageCount: event.pageCount, fingerprint: event.fingerprint }, ifMatch: null, ifNoneMatch: null
      }, once, 'etag')
      if ('replay' in outcome) return false
      if (outcome.failure !== null) {
        // Nothing is recorded: a retry may succeed once the document exists.
        throw problems.notFound(`No document has the id ${event.documentId}; the scan cannot be recorded.`, { instance: documents.itemPath(event.documentId) })
      }
      return true
    }
  })
}
