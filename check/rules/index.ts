// Every rule the check knows, in the order of the report: its id, the convention section it
// checks, and either a probe or the reason it cannot be observed from outside.
import { authRules } from './auth.js'
import { collectionRules } from './collections.js'
import { corsRules } from './cors.js'
import { errorRules } from './errors.js'
import { headerRules } from './headers.js'
import { methodRules } from './methods.js'
import { namingRules } from './naming.js'
import { queryRules } from './query.js'
import type { Rule } from './rule.js'
import { writeRules } from './writes.js'

export type { Rule } from './rule.js'

const unobservable: Rule[] = [
  {
    id: 'headers.propagation',
    section: 'Headers',
    title: 'Svc-Execution-Context, X-Request-ID and Svc-Service are passed on to downstream calls',
    unobservable: 'it concerns the requests the service itself sends'
  },
  {
    id: 'webhooks.consumers',
    section: 'Webhook consumer endpoints',
    title: 'webhook consumers are POST under /_webhooks/, HTTPS only, secured by a secret, marked x-internal',
    unobservable: 'the secret is the producer\'s; a delivery cannot be sent without it'
  }
]

export const RULES: readonly Rule[] = [
  methodRules[0] as Rule,
  ...headerRules,
  ...corsRules,
  ...authRules,
  ...errorRules,
  ...methodRules.slice(1),
  ...writeRules.filter(r => r.id.startsWith('methods.')),
  ...collectionRules,
  ...queryRules,
  ...writeRules.filter(r => !r.id.startsWith('methods.')),
  ...namingRules,
  ...unobservable
]

/** The rule of an id, or undefined. */
export function ruleOf (id: string): Rule | undefined {
  return RULES.find(r => r.id === id)
}
