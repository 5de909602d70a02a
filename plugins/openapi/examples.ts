import { Problem } from '../../schemas/problem.js'
import { ProblemError } from '../problem/index.js'

type Json = Record<string, unknown>

// The Problem schema's own example is a 400 Invalid Data; the other statuses get theirs here.
const INVALID_DATA = (Problem.examples as Json[])[0] as Json
// The client's X-Request-ID, which becomes the requestId (conventions: Errors 4): a short one.
const REQUEST_ID = 'trace-1'

/**
 * A detail of each status in the suite's words. Short, and without `instance`: the document
 * is bounded (test/openapi/document.test.ts), and the example shows the shape.
 */
const DETAILS: Readonly<Record<number, string>> = {
  401: 'The access token was not accepted.',
  403: 'The token does not grant documents:write.',
  404: 'No document has the id d-1.',
  405: 'POST is not supported here; use GET.',
  406: 'Accept admits no type this answers with.',
  409: "The name 'Q3' is taken; choose another.",
  412: 'If-Match is not the current ETag.',
  413: 'The body is larger than 1 MiB.',
  415: 'Send application/json.',
  428: 'If-Match is required; send the ETag.',
  429: 'Retry after 30 seconds.',
  500: 'Retry later, and quote the requestId.',
  503: 'Retry after 1 second.'
}

/**
 * An example problem body of `status`, valid against the Problem schema: each problem response
 * of the document shows one of its own status, not the schema's 400.
 */
export function problemExample (status: number): Json {
  if (status === 400) return INVALID_DATA
  // The title a problem of that status gets when the service throws it.
  const { title } = new ProblemError(status, 'SVC_EXAMPLE')
  const detail = DETAILS[status] ?? `${title}: see when the operation answers ${status}.`
  return { title, status, detail, requestId: REQUEST_ID }
}
