// The short exchange shown under a failure: the request as sent (token replaced), the status,
// the headers a rule reads, and the start of the body.
import type { Exchange } from '../types.js'

const SHOWN = /^(content-type|content-language|location|allow|etag|www-authenticate|svc-|x-|cache-control|access-control-)/
const MAX_BODY = 300

const cut = (text: string): string => text.length > MAX_BODY ? `${text.slice(0, MAX_BODY)}… (${text.length} characters)` : text

/**
 * Control characters (but tab and newline) written as escapes, `\u001b`: what a service sent
 * is shown, never acted on by the terminal that shows it (a carriage return, an ANSI sequence).
 */
export const visible = (text: string): string =>
  // eslint-disable-next-line no-control-regex
  text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/** The exchange as lines, `>` for the request and `<` for the answer. */
export function exchangeLines (ex: Exchange): string[] {
  const { request, response } = ex
  const lines = [`> ${request.method} ${request.path}${request.version === undefined ? '' : ` ${request.version}`}`]
  for (const [name, value] of Object.entries(request.headers)) if (name !== 'host') lines.push(`> ${name}: ${value}`)
  if (request.body !== undefined) lines.push(`> ${cut(request.body)}`)
  lines.push(response.status === 0 ? '< (no answer)' : `< ${response.status}`)
  for (const [name, value] of Object.entries(response.headers)) if (SHOWN.test(name)) lines.push(`< ${name}: ${value}`)
  if (response.text !== '') lines.push(`< ${cut(response.text.replace(/\s*\n\s*/g, ' '))}`)
  return lines.map(visible)
}
