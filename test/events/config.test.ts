import t from 'tap'
import { loadConfig } from '../../config.js'
import { parseRetrySchedule } from '../../plugins/events/index.js'

// WEBHOOK_RETRY_SCHEDULE, WEBHOOK_ALLOW_INSECURE_TARGETS and WEBHOOK_DELIVERY: a bad value stops the start, naming the variable.

t.test('defaults, accepted values, and refusals naming the variable', async t => {
  const { config } = loadConfig({ DATA_DIR: 'memory' })
  t.equal(config.webhookRetrySchedule, '5s,5m,30m,2h,5h,10h,10h')
  t.equal(config.webhookAllowInsecureTargets, false)
  const set = loadConfig({ DATA_DIR: 'memory', WEBHOOK_RETRY_SCHEDULE: '1s, 2 minutes,3h', WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' }).config
  t.strictSame(parseRetrySchedule(set.webhookRetrySchedule), [1000, 120_000, 10_800_000], 'every value the check accepts parses')
  t.equal(set.webhookAllowInsecureTargets, true)
  t.throws(() => loadConfig({ DATA_DIR: 'memory', WEBHOOK_RETRY_SCHEDULE: '5s,soon' }), /WEBHOOK_RETRY_SCHEDULE: expected comma-separated durations such as 5s,5m,30m \(got "5s,soon"\)/)
  t.throws(() => loadConfig({ DATA_DIR: 'memory', WEBHOOK_ALLOW_INSECURE_TARGETS: 'yes' }), /WEBHOOK_ALLOW_INSECURE_TARGETS: expected true or false \(got "yes"\)/)
})

t.test('WEBHOOK_DELIVERY: on by default; off only where other instances share the database', async t => {
  t.equal(loadConfig({ DATA_DIR: 'memory' }).config.webhookDelivery, true)
  t.equal(loadConfig({ DATA_DIR: 'memory', WEBHOOK_DELIVERY: '' }).config.webhookDelivery, true)
  t.equal(loadConfig({ DATA_DIR: 'memory', WEBHOOK_DELIVERY: 'true' }).config.webhookDelivery, true)
  const url = 'postgres://svc@db.internal:5432/app'
  t.equal(loadConfig({ DATABASE_URL: url, WEBHOOK_DELIVERY: 'false' }).config.webhookDelivery, false)
  t.throws(() => loadConfig({ DATA_DIR: 'memory', WEBHOOK_DELIVERY: 'false' }), /WEBHOOK_DELIVERY: false needs DATABASE_URL/)
  t.throws(() => loadConfig({ DATABASE_URL: url, WEBHOOK_DELIVERY: 'no' }), /WEBHOOK_DELIVERY: expected true or false \(got "no"\)/)
})
