import t from 'tap'
import { stopRequests, type StopVerdict } from '../../stop-signals.js'

// Each case: when (on the injected clock) something happens, and what each signal is taken for.
const cases: Array<{ name: string, events: Array<[number, 'signal' | 'begin']>, verdicts: StopVerdict[] }> = [
  { name: 'the first signal is the stop', events: [[5, 'signal']], verdicts: ['stop'] },
  { name: 'one Ctrl-C arriving twice (terminal and npm) is one stop', events: [[5, 'signal'], [5.2, 'signal']], verdicts: ['stop', 'repeat'] },
  { name: 'repeats within the window all belong to the stop', events: [[5, 'signal'], [5.2, 'signal'], [1004.9, 'signal']], verdicts: ['stop', 'repeat', 'repeat'] },
  { name: 'a signal once the window is over exits at once', events: [[5, 'signal'], [5.2, 'signal'], [1005, 'signal']], verdicts: ['stop', 'repeat', 'force'] },
  { name: 'the window counts from the stop, not from the last repeat', events: [[0, 'signal'], [999, 'signal'], [1500, 'signal']], verdicts: ['stop', 'repeat', 'force'] },
  { name: 'a stop begun by an error: a signal right after is the same stop', events: [[0, 'begin'], [10, 'signal']], verdicts: ['repeat'] },
  { name: 'a stop begun by an error: a signal later exits at once', events: [[0, 'begin'], [2000, 'signal']], verdicts: ['force'] },
  { name: 'begin after the signal keeps the signal\'s start', events: [[0, 'signal'], [900, 'begin'], [1200, 'signal']], verdicts: ['stop', 'force'] }
]

for (const c of cases) {
  t.test(c.name, async (t) => {
    let clock = 0
    const stops = stopRequests({ now: () => clock })
    const verdicts: StopVerdict[] = []
    for (const [at, what] of c.events) {
      clock = at
      if (what === 'begin') stops.begin()
      else verdicts.push(stops.signal())
    }
    t.strictSame(verdicts, c.verdicts)
  })
}

t.test('the window is an option', async (t) => {
  let clock = 0
  const stops = stopRequests({ now: () => clock, repeatMillis: 50 })
  t.equal(stops.signal(), 'stop')
  clock = 49
  t.equal(stops.signal(), 'repeat')
  clock = 50
  t.equal(stops.signal(), 'force')
})
