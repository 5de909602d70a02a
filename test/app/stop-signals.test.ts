import t from 'tap'
import { signalCopies, stopRequests, type StopVerdict } from '../../stop-signals.js'

// Each case: how many copies of one stop reach the service, what happens in turn (a signal, or
// the stop begun by an error), and what each signal is taken for.
const cases: Array<{ name: string, copies: number, events: Array<'signal' | 'begin'>, verdicts: StopVerdict[] }> = [
  { name: 'run directly: the first signal stops', copies: 1, events: ['signal'], verdicts: ['stop'] },
  { name: 'run directly: the second exits at once', copies: 1, events: ['signal', 'signal', 'signal'], verdicts: ['stop', 'force', 'force'] },
  { name: 'under npm: one Ctrl-C arriving twice is one stop', copies: 2, events: ['signal', 'signal'], verdicts: ['stop', 'repeat'] },
  { name: 'under npm: the second Ctrl-C exits at once', copies: 2, events: ['signal', 'signal', 'signal', 'signal'], verdicts: ['stop', 'repeat', 'force', 'force'] },
  { name: 'a stop begun by an error: the next signal exits at once, run directly', copies: 1, events: ['begin', 'signal'], verdicts: ['force'] },
  { name: 'a stop begun by an error: the next signal exits at once, under npm', copies: 2, events: ['begin', 'signal'], verdicts: ['force'] },
  { name: 'the stop\'s own begin after its signal changes nothing', copies: 2, events: ['signal', 'begin', 'signal', 'signal'], verdicts: ['stop', 'repeat', 'force'] },
  { name: 'begin twice counts once', copies: 1, events: ['begin', 'begin', 'signal'], verdicts: ['force'] }
]

for (const c of cases) {
  t.test(c.name, async (t) => {
    const stops = stopRequests(c.copies)
    const verdicts: StopVerdict[] = []
    for (const what of c.events) {
      if (what === 'begin') stops.begin()
      else verdicts.push(stops.signal())
    }
    t.strictSame(verdicts, c.verdicts)
  })
}

t.test('npm scripts set npm_lifecycle_event: there a stop arrives twice', async (t) => {
  t.equal(signalCopies({}), 1)
  t.equal(signalCopies({ npm_lifecycle_event: 'start' }), 2)
})
