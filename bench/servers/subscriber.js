// A webhook subscriber answering 204 at once, in a process of its own (not the load
// generator's): notes when each delivery arrived against the event's timestamp. Its stats
// answer adds `received` (deliveries so far) and `lags` (milliseconds from each event's
// timestamp to its arrival, those noted since the last stats answer).
import { createServer } from 'node:http'

let received = 0
let lags = []
const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    received++
    const at = Date.now()
    const body = Buffer.concat(chunks).toString()
    const i = body.indexOf('"timestamp":"') + 13
    lags.push(at - Date.parse(body.slice(i, i + 24)))
    res.statusCode = 204
    res.end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  process.on('message', (msg) => {
    if (msg.type !== 'stats') return
    const cpu = process.cpuUsage()
    process.send({ type: 'stats', id: msg.id, cpuMicros: cpu.user + cpu.system, peakRss: process.memoryUsage.rss(), received, lags })
    lags = []
  })
  process.once('SIGTERM', () => process.exit(0))
  process.once('disconnect', () => process.exit(0))
  process.send({ type: 'listening', port: server.address().port })
})
