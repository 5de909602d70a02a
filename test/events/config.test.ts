import t from 'tap'
import { loadConfig } from '../../config.js'
import { parseRetrySchedule } from '../../plugins/events/index.js'

// WEBHOOK_RETRY_SCHEDULE and WEBHOOK_ALLOW_INSECURE_TARGETS: a bad value stops the start, naming the variable.

t.test('defaults, accepted values, and refusals naming the variable', async t => {
  const { config } = loadConfig({ DATA_DIR: 'memory' })
  t.equal(config.webhookRetrySchedule, '5s,5m,30m,2h,5h,10h,10h')
  t.equal(config.webhookAllowInsecureTargets, false)
  const set = loadConfig({ DATA_DIR: 'memory', WEBHOOK_RETRY_SCHEDULE: '1s, 2 minutes,3h', WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' }).config
  t.same(parseRetrySchedule(set.webhookRetrySchedule), [1000, 120_000, 10_800_000], 'every value the check accepts parses')
  t.equal(set.webhookAllowInsecureTargets, true)
  t.throws(() => loadConfig({ DATA_DIR: 'memory', WEBHOOK_RETRY_SCHEDULE: '5s,soon' }), /WEBHOOK_RETRY_SCHEDULE: expected comma-separated durations such as 5s,5m,30m \(got "5s,soon"\)/)
  t.throws(() => loadConfig({ DATA_DIR: 'memory', WEBHOOK_ALLOW_INSECURE_TARGETS: 'yes' }), /WEBHOOK_ALLOW_INSECURE_TARGETS: expected true or false \(got "yes"\)/)
})
