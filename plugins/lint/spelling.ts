// Naming rules for properties, 2: names are American English. What a linter can tell is a
// British spelling, and only one that an American word list does not hold as a variant (SCOWL's,
// as Debian's wamerican ships it, holds `theatre`, `licence` and `programme`, so those pass):
// `colour`, `centre`, `organisation`, `analyse`. Slang is left alone: no list can hold it.

/** Words spelled the British way, each with the American spelling. */
const WORDS: ReadonlyArray<readonly [string, string]> = [
  ...['arbour', 'ardour', 'behaviour', 'candour', 'clamour', 'colour', 'demeanour', 'endeavour', 'favour', 'favourite', 'flavour', 'harbour', 'honour', 'humour', 'labour', 'neighbour', 'odour', 'parlour', 'rigour', 'rumour', 'savour', 'splendour', 'tumour', 'valour', 'vapour', 'vigour']
    .map(w => [w, w.replace(/our/, 'or')] as const),
  ...['calibre', 'centre', 'centimetre', 'fibre', 'kilometre', 'litre', 'meagre', 'metre', 'millimetre', 'spectre']
    .map(w => [w, `${w.slice(0, -2)}er`] as const),
  ['defence', 'defense'], ['offence', 'offense'], ['cheque', 'check'], ['aluminium', 'aluminum'], ['jewellery', 'jewelry'], ['marvellous', 'marvelous'],
  ['kerb', 'curb'], ['mould', 'mold'], ['manoeuvre', 'maneuver'], ['paediatric', 'pediatric'], ['oestrogen', 'estrogen'], ['sceptic', 'skeptic'],
  ['sceptical', 'skeptical']
]

// What a word may add to them: its plural, past, -ing, agent and adjective forms (`colours`,
// `coloured`, `behavioural`, `neighbourhood`); a word ending in `e` adds `s` or `d` (`centres`, `centred`).
const ENDINGS = ['', 's', 'ed', 'ing', 'er', 'ers', 'ful', 'less', 'able', 'al', 'hood']
const E_ENDINGS = ['', 's', 'd']

// Stems whose British `-is-` is American `-iz-` (organise, organisation), and the `-yse` verbs
// (analyse): they need an ending, as `emphasis` and `analyses` (a plural) are American too.
const IZE_STEMS = ['anonymis', 'apologis', 'authoris', 'capitalis', 'categoris', 'centralis', 'characteris', 'criticis', 'customis', 'digitis', 'emphasis', 'familiaris', 'finalis', 'generalis', 'globalis', 'harmonis', 'initialis', 'itemis', 'legalis', 'localis', 'materialis', 'maximis', 'memoris', 'minimis', 'mobilis', 'modernis', 'monetis', 'neutralis', 'normalis', 'optimis', 'organis', 'parameteris', 'personalis', 'prioritis', 'randomis', 'rationalis', 'realis', 'recognis', 'sanitis', 'serialis', 'deserialis', 'socialis', 'specialis', 'stabilis', 'standardis', 'summaris', 'symbolis', 'synchronis', 'tokenis', 'utilis', 'vectoris', 'visualis']
const IZE_ENDINGS = ['e', 'es', 'ed', 'ing', 'er', 'ers', 'ation', 'ations', 'able']
const YZE_STEMS = ['analys', 'catalys', 'dialys', 'paralys']
const YZE_ENDINGS = ['e', 'ed', 'ing', 'er', 'ers']

/** Each British form, with the American spelling of its word (of the word as written, for -ise and -yse). */
function spellings (): Map<string, string> {
  const all = new Map<string, string>()
  for (const [british, american] of WORDS) {
    for (const ending of british.endsWith('e') ? E_ENDINGS : ENDINGS) all.set(british + ending, american)
  }
  for (const stem of IZE_STEMS) for (const ending of IZE_ENDINGS) all.set(stem + ending, `${stem.slice(0, -1)}z${ending}`)
  for (const stem of YZE_STEMS) for (const ending of YZE_ENDINGS) all.set(stem + ending, `${stem.slice(0, -1)}z${ending}`)
  return all
}

/** Each British form of a word, in lower case, with the American spelling. */
export const BRITISH_SPELLINGS: ReadonlyMap<string, string> = spellings()

/**
 * The first word of a camelCase name (or of a dotted path's segments) that is spelled the
 * British way, with its American spelling; undefined when there is none. Words are compared
 * in lower case.
 */
export function britishSpelling (name: string): { british: string, american: string } | undefined {
  for (const part of name.split('.')) {
    for (const word of part.split(/(?=[A-Z])/)) {
      const lower = word.toLowerCase()
      const american = BRITISH_SPELLINGS.get(lower)
      if (american !== undefined) return { british: word, american }
    }
  }
  return undefined
}
