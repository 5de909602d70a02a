import t from 'tap'
import { WantedEvents } from '../../plugins/events/wanted.js'
import type { QuietPart } from '../../store/statement-parts.js'

t.test('a quiet check per event type until a subscription is found to want it, and again once one is not', async t => {
  const made: string[] = []
  const wanted = new WantedEvents((type): QuietPart => {
    made.push(type)
    return { key: 'subs', values: [type], sql: () => 'true' }
  }, 2)
  const first = wanted.quiet('note.created', 'prod')
  t.strictSame(first?.values, ['note.created'])
  t.equal(wanted.quiet('note.created', 'preprod'), first, 'one check per type, whatever the context')
  t.strictSame(made, ['note.created'])

  wanted.heard('note.created', 'prod', true)
  t.equal(wanted.quiet('note.created', 'prod'), null, 'wanted in prod')
  t.equal(wanted.quiet('note.created', 'preprod'), first, 'not in another context')
  t.not(wanted.quiet('note.updated', 'prod'), null, 'nor another type')
  wanted.heard('note.created', 'prod', true)
  wanted.heard('note.updated', 'prod', true)
  t.equal(wanted.quiet('note.created', 'prod'), null, 'the same pair again: nothing forgotten')
  wanted.heard('note.updated', 'prod', false)
  t.not(wanted.quiet('note.updated', 'prod'), null, 'no longer wanted: quiet again')

  // At its bound, a new pair makes it forget the others: each costs one refused quiet write.
  wanted.heard('note.updated', 'prod', true)
  wanted.heard('note.created', 'preprod', true)
  t.equal(wanted.quiet('note.created', 'preprod'), null)
  t.not(wanted.quiet('note.created', 'prod'), null, 'forgotten')
  t.not(wanted.quiet('note.updated', 'prod'), null, 'forgotten')
})
