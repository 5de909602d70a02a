import { Type, type Static } from '@sinclair/typebox'
import { Nullable, UpperSnakeEnum } from '../../schemas/types.js'
import { Problem } from '../../schemas/problem.js'
import { standardProperties } from '../../schemas/standard.js'
import { CursorCollection } from '../../schemas/collection.js'

const count = (description: string) => Type.Integer({ minimum: 0, maximum: 2147483647, description })

/** A job as its status monitor shows it (conventions: "POST accepted for asynchronous processing returns 202"). */
export const Job = Type.Object({
  id: standardProperties.id,
  ref: standardProperties.ref('job'),
  kind: Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$', description: 'What the job does, e.g. BULK.' }),
  collection: Type.String({ minLength: 1, maxLength: 100, description: 'The collection it works on.' }),
  status: UpperSnakeEnum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED'], { description: 'PENDING until an instance takes it up; SUCCEEDED when it ran to its end (its result says what each operation did); FAILED when the job itself could not run (see problem).' }),
  operationCount: count('Operations the job was given.'),
  completedCount: count('Operations done so far.'),
  createdDateTime: standardProperties.createdDateTime,
  createdBy: Nullable(standardProperties.createdBy),
  modifiedDateTime: standardProperties.modifiedDateTime,
  completedDateTime: Nullable(standardProperties.modifiedDateTime, { description: 'When the job ended; null until then.' }),
  result: Nullable(Type.Object({}, { additionalProperties: true, description: 'What the job produced, once SUCCEEDED: for BULK, the bulk response body.' })),
  problem: Nullable(Problem, { description: 'Why the job itself failed, when FAILED.' })
}, { additionalProperties: false, title: 'Job', description: 'Work accepted for asynchronous processing, and how it went.' })

export type JobBody = Static<typeof Job>

/** A job as its list shows it: a collection's items are summaries (conventions: "Collection response envelope"). */
export const JobSummary = Type.Omit(Job, ['result'], { additionalProperties: false, title: 'JobSummary', description: 'A job as the list of jobs shows it: all but its result, which the job\'s own monitor gives.' })

export type JobSummaryBody = Static<typeof JobSummary>

export const JobCollection = CursorCollection(JobSummary)
