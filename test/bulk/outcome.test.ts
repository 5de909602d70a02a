import t from 'tap'
import { rolledBack, type Operation } from '../../plugins/bulk/outcome.js'

// An ATOMIC request's rolled-back operations name the failed ones as the context fields do
// (`operations[2].entity.name`: zero-based), with the client's operationId when it sent one.

const op = (index: number, operationId = String(index)): Operation =>
  ({ index, operationId, action: 'CREATE', id: null, ifMatch: null, ifMatchText: null, values: {}, outcome: null })

t.test('the detail and the context item name each failed operation by its index and operationId', async t => {
  const table: Array<[string, Operation[], string]> = [
    ['the first, no operationId', [op(0)], 'operations[0]'],
    ['an operationId equal to its index is the default one', [op(2, '2')], 'operations[2]'],
    ['an operationId of the client', [op(1, 'make-ann')], 'operations[1] (operationId "make-ann")'],
    ['an operationId with quotes', [op(1, 'a "b"')], 'operations[1] (operationId "a \\"b\\"")'],
    ['two', [op(1), op(3, 'x')], 'operations[1] and operations[3] (operationId "x")'],
    ['three', [op(0), op(4), op(9)], 'operations[0], operations[4] and operations[9]']
  ]
  for (const [name, failures, which] of table) {
    t.strictSame(rolledBack(failures), {
      status: 'FAILED',
      detail: `Not applied: the ATOMIC bulk request was rolled back because ${which} failed.`,
      context: [{ code: 'ROLLED_BACK', message: `was not applied because ${which} failed` }]
    }, name)
  }
})
