import { ServerResponse, type IncomingMessage, type Server } from 'node:http'
import type { Duplex } from 'node:stream'

/*
 * Two answers Node's HTTP server would otherwise cut short: a CONNECT request, which it gives
 * up on when nobody listens for 'connect', and an error answered before the request's body was
 * read, which it follows by closing the socket at once; the client, still sending the body,
 * may then get a reset instead of the answer (RFC 9112 §9.6, "lingering close").
 */

/** How long a closing connection keeps reading what the client still sends, so that it reads the answer. */
const LINGER_MS = 2000

/**
 * A 'connect' listener that serves the request through the server's 'request' listeners (the
 * app), on a response that closes the connection: Node's parser has let go of the socket.
 */
export function answerTunnelRequest (server: Server): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    socket.on('error', () => { socket.destroy() })
    // The parser is gone: nothing more of this request will arrive.
    if (!req.complete) req.push(null)
    const res = new ServerResponse(req)
    res.shouldKeepAlive = false
    res.assignSocket(socket as never)
    res.once('finish', () => {
      res.detachSocket(socket as never)
      lingeringEnd(socket)
    })
    server.emit('request', req, res)
  }
}

/**
 * Makes the socket's coming close a lingering one: Node calls `destroySoon` once the answer is
 * written; this sends FIN instead, reads (and drops) whatever the client is still sending, and
 * destroys the socket when the client closes its side or after a short while.
 */
export function lingerOnClose (socket: Duplex): void {
  const s = socket as Duplex & { destroySoon?: () => void }
  s.destroySoon = function destroySoon () { lingeringEnd(s) }
}

function lingeringEnd (socket: Duplex): void {
  if (socket.destroyed) return
  const timer = setTimeout(() => { socket.destroy() }, LINGER_MS)
  timer.unref()
  const done = (): void => {
    clearTimeout(timer)
    socket.destroy()
  }
  socket.once('end', done)
  socket.once('close', done)
  socket.once('error', done)
  socket.end()
  // Drop what still comes; a socket nobody reads would fill up and stop the client's writes.
  socket.resume()
}
