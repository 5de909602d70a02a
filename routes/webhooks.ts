import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { problems } from '../plugins/problem/errors.js'
import { newEtag } from '../plugins/resource/routes.js'
import { registerWebhook, standardWebhooks } from '../plugins/webhooks/index.js'
import { Id, Int32 } from '../schemas/types.js'
import { quoteIdent } from '../store/quote.js'
import { documents } from './v1/documents.js'

/** The scanner's payload (reference-service.md, Webhooks); the producer owns it, so extra fields pass. */
export const DocumentScanned = Type.Object({
  documentId: Id(),
  pageCount: Int32({ minimum: 0, maximum: 100000 }),
  fingerprint: Type.String({ minLength: 1, maxLength: 255 })
})

const T = quoteIdent(documents.table)
const SCANNED_SQL = `UPDATE ${T} SET "pageCount" = $3, fingerprint = $4, etag = $5, "modifiedDateTime" = now(), "modifiedBy" = $6
  WHERE ctx = $1 AND id = $2 RETURNING 1 AS ok`

/**
 * `POST /_webhooks/scanner/document-scanned`: Standard Webhooks signatures, HTTPS only,
 * deduplicated by `webhook-id` in the same transaction as the update it makes.
 */
export function registerScannerWebhook (fastify: FastifyInstance, secret: string): void {
  registerWebhook(fastify, {
    producer: 'scanner',
    event: 'document-scanned',
    verifier: standardWebhooks({ secrets: [secret] }),
    schema: DocumentScanned,
    handler: async (event, tx, request) => {
      const { rows } = await tx.query(SCANNED_SQL, [request.executionContext, event.documentId, event.pageCount, event.fingerprint, newEtag(), 'scanner'], { name: 'svc_webhook_document_scanned' })
      if (rows.length === 0) {
        // Thrown inside the transaction: the delivery id is not recorded, so a retry may succeed later.
        const path = documents.itemPath(event.documentId)
        throw problems.notFound(`No document has the id ${event.documentId}; the scan cannot be recorded.`, { instance: path })
      }
    }
  })
}
