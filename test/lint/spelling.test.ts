import t from 'tap'
import fc from 'fast-check'
import { BRITISH_SPELLINGS, britishSpelling } from '../../plugins/lint/spelling.js'
import { lintSchema } from '../../plugins/lint/schema.js'

// Naming rules for properties, 2: a name with a word spelled the British way fails, with the
// American spelling in the message; a word American English also spells that way passes.

t.test('britishSpelling: the first British word of a name, with its American spelling', async t => {
  const cases: Array<[string, [string, string] | undefined]> = [
    ['colour', ['colour', 'color']],
    ['backgroundColour', ['Colour', 'color']],
    ['colours', ['colours', 'color']],
    ['behaviouralScore', ['behavioural', 'behavior']],
    ['centreName', ['centre', 'center']],
    ['centred', ['centred', 'center']],
    ['organisationId', ['organisation', 'organization']],
    ['customisableFields', ['customisable', 'customizable']],
    ['lastAnalysedDateTime', ['Analysed', 'analyzed']],
    ['address.neighbourhood', ['neighbourhood', 'neighbor']],
    ['address.neighbourCount', ['neighbour', 'neighbor']],
    ['defenceBudget', ['defence', 'defense']],
    ['favouriteColour', ['favourite', 'favorite']],
    // American English too: nouns that end like the British verbs, and accepted variants.
    ['emphasis', undefined],
    ['analyses', undefined],
    ['analysis', undefined],
    ['theatreName', undefined],
    ['licenceNumber', undefined],
    ['cancelledBy', undefined],
    ['greyLevel', undefined],
    ['organism', undefined],
    ['realistic', undefined],
    ['color', undefined],
    ['organizationName', undefined],
    ['', undefined]
  ]
  for (const [name, expected] of cases) {
    const found = britishSpelling(name)
    t.strictSame(found === undefined ? undefined : [found.british, found.american], expected, name)
  }
})

t.test('the lint names the word and the American spelling, and the rule can be switched off', async t => {
  const schema = { type: 'object', properties: { labourCost: { type: 'string', maxLength: 9 } } }
  const [violation] = lintSchema(schema)
  t.strictSame(violation, { rule: 'american-spelling', path: '#/properties/labourCost', message: '"labourCost" spells "labour" the British way: names are American English (labor)' })
  t.strictSame(lintSchema(schema, { rules: { 'american-spelling': false } }), [])
})

const BRITISH = [...BRITISH_SPELLINGS.keys()]
const head = fc.stringMatching(/^[a-z]{2,6}$/).filter(w => britishSpelling(w) === undefined)
const capital = (w: string): string => (w[0] as string).toUpperCase() + w.slice(1)

t.test('property: a British form anywhere in a name fails, and the name with the American spelling passes', async t => {
  fc.assert(fc.property(fc.constantFrom(...BRITISH), head, fc.boolean(), (british, other, first) => {
    const american = BRITISH_SPELLINGS.get(british) as string
    const name = first ? british + capital(other) : other + capital(british)
    const fixed = first ? american + capital(other) : other + capital(american)
    return britishSpelling(name)?.american === american && britishSpelling(fixed) === undefined
  }), { numRuns: 2000 })
  t.pass('checked')
})

t.test('every British form maps to a different American spelling', async t => {
  for (const [british, american] of BRITISH_SPELLINGS) {
    if (british === american || BRITISH_SPELLINGS.has(american)) t.fail(`${british} → ${american}`)
  }
  t.ok(BRITISH_SPELLINGS.size > 500, 'the inflected forms are there')
})
