import t from 'tap'
import { pglite } from '../support/databases.js'
import { build, eventually } from './helper.js'

// The embedded store runs each statement in the service's own thread, and a run's statements
// outside a transaction settle as promises only. The run lets the event loop turn after its
// claim, before its handler, before it stages a result and before the runner's own end, so
// requests that arrived meanwhile are read between: what the run does next comes after anything
// the loop had waiting (here, a callback scheduled with setImmediate just before).

t.test('a run lets the event loop turn before its handler, before it stages a result and before its end', async t => {
  const store = await pglite.create(t)
  const order: string[] = []
  const app = await build(t, store, { path: false }, {
    TURNS: async (run) => {
      order.push('handler')
      setImmediate(() => { order.push('waiting before the stage') })
      const staged = { staged: true }
      await run.stage(staged)
      setImmediate(() => { order.push('waiting before the end') })
      return { result: staged, completedCount: 1 }
    }
  })
  const { table } = app.jobs
  const claim = table.claim.bind(table)
  table.claim = async (...args) => {
    const job = await claim(...args)
    if (job !== null) setImmediate(() => { order.push('waiting after the claim') })
    return job
  }
  const stage = table.stage.bind(table)
  table.stage = async (...args) => {
    order.push('stage')
    return await stage(...args)
  }
  const finish = table.finish.bind(table)
  table.finish = async (...args) => {
    order.push('end')
    return await finish(...args)
  }
  t.teardown(() => { table.claim = claim; table.stage = stage; table.finish = finish })
  const id = crypto.randomUUID()
  await store.transaction(async (tx) => { await app.jobs.enqueue(tx, { ctx: 'prod', id, kind: 'TURNS', collection: 'things', subject: 'user-1', input: {}, operationCount: 1, requestId: null }) })
  app.jobs.wake()
  const job = await eventually(async () => {
    const j = await table.get(store, 'prod', 'user-1', id)
    return j?.status === 'SUCCEEDED' ? j : null
  })
  t.strictSame(job.result, { staged: true })
  t.strictSame(order, ['waiting after the claim', 'handler', 'waiting before the stage', 'stage', 'waiting before the end', 'end'])
})
