// The same trivial route as bare.js, behind every plugin of the conventions core:
// problem, validation, conventions, CORS, methods, bearer auth (HS256) and OpenAPI.
import * as suite from '../../dist/index.js'
import { buildSuite } from './suite-app.js'
import { serveStats } from '../lib/harness.js'

const app = await buildSuite(suite, process.env.BENCH_SECRET)
await app.listen({ port: 0, host: '127.0.0.1' })
serveStats(app.server.address().port)
