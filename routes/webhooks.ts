import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { Id, Int32, problems, registerWebhook, standardWebhooks, type ServedResource } from '../index.js'

/** The scanner's payload (reference-service.md, Webhooks); the producer owns it, so extra fields pass. */
export const DocumentScanned = Type.Object({
  documentId: Id(),
  pageCount: Int32({ minimum: 0, maximum: 100000 }),
  fingerprint: Type.String({ minLength: 1, maxLength: 255 })
})

/**
 * `POST /_webhooks/scanner/document-scanned`: Standard Webhooks signatures, HTTPS only,
 * deduplicated by `webhook-id` in the same transaction as the change it makes, which goes
 * through the documents' write path like any other.
 */
export function registerScannerWebhook (fastify: FastifyInstance, secret: string): void {
  const documents = fastify.resources.get('documents') as ServedResource
  registerWebhook(fastify, {
    producer: 'scanner',
    event: 'document-scanned',
    verifier: standardWebhooks({ secrets: [secret] }),
    schema: DocumentScanned,
    handler: async (event, tx, request) => {
      const call = { ctx: request.executionContext, by: 'scanner', atomic: true, requestId: request.requestId }
      const [result] = await documents.writer.run(tx, call, [{
        action: 'set', id: event.documentId, values: { pageCount: event.pageCount, fingerprint: event.fingerprint }, ifMatch: null, ifNoneMatch: null
      }])
      if (result?.failure != null) {
        // Thrown inside the transaction: the delivery id is not recorded, so a retry may succeed later.
        throw problems.notFound(`No document has the id ${event.documentId}; the scan cannot be recorded.`, { instance: documents.itemPath(event.documentId) })
      }
    }
  })
}
