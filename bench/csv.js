// A page of 100 documents as CSV against the same page as JSON, from the same service in the
// same round: the CSV writer (plugins/csv) against the response schema's serializer. Before
// the load, the CSV page is checked to hold the JSON page's documents, in the same order.
import { pairedRounds } from './lib/harness.js'
import { headers, startService } from './lib/service.js'

/** The page both cases ask for: the first 100 documents, in the default order. */
export const PAGE = '/v1/documents?limit=100'
const csvHeaders = { ...headers, accept: 'text/csv' }

async function fetchPage (service, accept) {
  const res = await fetch(service.base + PAGE, { headers: { ...headers, accept } })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`GET ${PAGE} as ${accept}: ${res.status}: ${text.slice(0, 500)}`)
  return { type: res.headers.get('content-type'), text }
}

/** Runs the case on the seeded database at `url`; returns its rounds. */
export async function runCsv ({ url, log }) {
  const service = await startService(url)
  try {
    const json = JSON.parse((await fetchPage(service, 'application/json')).text).results
    const csv = await fetchPage(service, 'text/csv')
    // The ids in the first column: UUIDs, never quoted.
    const ids = csv.text.split('\r\n').slice(1, -1).map((line) => line.slice(0, line.indexOf(',')))
    if (csv.type !== 'text/csv; charset=UTF-8' || json.length !== 100 || ids.join() !== json.map((d) => d.id).join()) {
      throw new Error(`the CSV page of ${PAGE} does not hold the JSON page's 100 documents`)
    }
  } finally {
    await service.stop()
  }
  return await pairedRounds({
    start: async () => ({ service: await startService(url) }),
    cases: {
      json: { server: 'service', path: PAGE, headers },
      csv: { server: 'service', path: PAGE, headers: csvHeaders }
    },
    log
  })
}
