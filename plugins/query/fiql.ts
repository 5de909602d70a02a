import type { ComparisonOp } from '../../model/query.js'
import { QueryError } from './errors.js'
import { shownValue } from '../shared/options.js'

/*
 * FIQL/RSQL parser (conventions: "Advanced filtering"), recursive descent over
 * character codes: no regular expression, so no input can make it backtrack.
 *
 *   or         = and { "," and }                  ; binds looser than ";"
 *   and        = constraint { ";" constraint }
 *   constraint = "(" or ")" | comparison
 *   comparison = selector operator ( value | "(" value { "," value } ")" )
 *   selector   = name { "." name }                 ; at most three levels (checked when typed)
 *   operator   = "==" | "!=" | "=" letters "="
 *   value      = unquoted | '"' … '"' | "'" … "'"
 *
 * Whitespace between tokens is ignored. An unquoted value is a run of characters other
 * than whitespace and the reserved `" ' ( ) ; , = ! ~ < >`. In every value a backslash
 * escapes the next character (`\"`, `\\`, `\*`, `\;`), and an unescaped `*` is a
 * wildcard, quoted or not: quoting only lets reserved characters and spaces in. `?` is
 * an ordinary character (RSQL has no single-character wildcard).
 */

/** Operators of the conventions' table, by their FIQL spelling. */
export const FIQL_OPERATORS: ReadonlyMap<string, { readonly op: ComparisonOp, readonly ci: boolean }> = new Map([
  ['==', { op: 'eq', ci: false }],
  ['!=', { op: 'ne', ci: false }],
  ['=lt=', { op: 'lt', ci: false }],
  ['=le=', { op: 'le', ci: false }],
  ['=gt=', { op: 'gt', ci: false }],
  ['=ge=', { op: 'ge', ci: false }],
  ['=in=', { op: 'in', ci: false }],
  ['=out=', { op: 'out', ci: false }],
  ['=isnull=', { op: 'isnull', ci: false }],
  ['=contains=', { op: 'contains', ci: false }],
  ['=startswith=', { op: 'startswith', ci: false }],
  ['=endswith=', { op: 'endswith', ci: false }],
  ['=like=', { op: 'like', ci: false }],
  ['=notlike=', { op: 'notlike', ci: false }],
  ['=containsic=', { op: 'contains', ci: true }],
  ['=startswithic=', { op: 'startswith', ci: true }],
  ['=endswithic=', { op: 'endswith', ci: true }],
  ['=likeic=', { op: 'like', ci: true }],
  ['=notlikeic=', { op: 'notlike', ci: true }]
] as const)

const OPERATOR_LIST = [...FIQL_OPERATORS.keys()].join(', ')

export interface FiqlLimits {
  /** Longest expression, in characters (default 2000). */
  maxLength: number
  /** Deepest nesting of parentheses (default 10, at most 100). */
  maxDepth: number
  /** Most values in one `=in=`/`=out=` list (default 100). */
  maxListSize: number
  /** Most comparisons in one expression (default 50). */
  maxComparisons: number
}

export const DEFAULT_FIQL_LIMITS: Readonly<FiqlLimits> = Object.freeze({
  maxLength: 2000,
  maxDepth: 10,
  maxListSize: 100,
  maxComparisons: 50
})

/** Fills defaults and checks limits once, at setup; throws a TypeError naming a bad one. */
export function resolveFiqlLimits (limits: Partial<FiqlLimits> = {}): Readonly<FiqlLimits> {
  const out = { ...DEFAULT_FIQL_LIMITS }
  for (const name of Object.keys(DEFAULT_FIQL_LIMITS) as Array<keyof FiqlLimits>) {
    const value = limits[name]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value < 1 || (name === 'maxDepth' && value > 100)) {
      throw new TypeError(`FIQL limits: ${name} must be a positive integer${name === 'maxDepth' ? ' up to 100' : ''}, got ${shownValue(value)}`)
    }
    out[name] = value
  }
  return Object.freeze(out)
}

/** One value as written: its literal segments between unescaped `*` wildcards. */
export interface FiqlArgument {
  /** One segment when the value has no wildcard. */
  readonly segments: readonly string[]
  readonly position: number
  /** Position of the first unescaped `*`, or -1. */
  readonly wildcardAt: number
}

export interface FiqlComparison {
  readonly kind: 'cmp'
  readonly selector: string
  /** Position of the selector. */
  readonly position: number
  /** The operator as written (`==`, `=lt=` …), always one of FIQL_OPERATORS. */
  readonly operator: string
  readonly operatorAt: number
  readonly args: readonly FiqlArgument[]
  /** Whether the values were written as a parenthesized list. */
  readonly list: boolean
}

export interface FiqlJunction {
  readonly kind: 'and' | 'or'
  readonly children: readonly FiqlNode[]
}

/** The untyped syntax tree: selectors and values as text, checked against no field map. */
export type FiqlNode = FiqlComparison | FiqlJunction

function isSpace (code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13
}

/** Whitespace and `" ' ( ) ; , = ! ~ < >` end an unquoted selector or value. */
function isReserved (code: number): boolean {
  switch (code) {
    case 32: case 9: case 10: case 13:
    case 34: case 39: case 40: case 41: case 59: case 44: case 61: case 33: case 126: case 60: case 62:
      return true
    default:
      return false
  }
}

function isLetter (code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90)
}

/** Appends `node`, or its children when it is a group of the same kind: a;(b;c) is a;b;c. */
function flattenInto (children: FiqlNode[], kind: 'and' | 'or', node: FiqlNode): void {
  if (node.kind === kind) children.push(...node.children)
  else children.push(node)
}

class Parser {
  private i = 0
  private depth = 0
  private comparisons = 0
  private readonly text: string
  private readonly parameter: string
  private readonly limits: Readonly<FiqlLimits>

  constructor (text: string, parameter: string, limits: Readonly<FiqlLimits>) {
    this.text = text
    this.parameter = parameter
    this.limits = limits
  }

  parse (): FiqlNode {
    this.skipSpace()
    if (this.i === this.text.length) this.fail('syntax', `The ${this.parameter} expression is empty.`, 0)
    const node = this.or()
    if (this.i < this.text.length) {
      const ch = this.text[this.i] as string
      this.fail('syntax', `Unexpected "${ch}" at position ${this.i}; join comparisons with ";" (and) or "," (or).`, this.i, ch)
    }
    return node
  }

  private fail (reason: 'syntax' | 'limit' | 'operator', message: string, position: number, value?: string): never {
    throw new QueryError(reason, this.parameter, message, position, value)
  }

  private skipSpace (): void {
    while (this.i < this.text.length && isSpace(this.text.charCodeAt(this.i))) this.i++
  }

  /** Consumes `code` (after whitespace) when it is next. */
  private eat (code: number): boolean {
    this.skipSpace()
    if (this.text.charCodeAt(this.i) !== code) return false
    this.i++
    return true
  }

  private or (): FiqlNode {
    const first = this.and()
    if (!this.eat(44)) return first
    const children: FiqlNode[] = []
    flattenInto(children, 'or', first)
    do {
      flattenInto(children, 'or', this.and())
    } while (this.eat(44))
    return { kind: 'or', children }
  }

  private and (): FiqlNode {
    const first = this.constraint()
    if (!this.eat(59)) return first
    const children: FiqlNode[] = []
    flattenInto(children, 'and', first)
    do {
      flattenInto(children, 'and', this.constraint())
    } while (this.eat(59))
    return { kind: 'and', children }
  }

  private constraint (): FiqlNode {
    this.skipSpace()
    const open = this.i
    if (this.text.charCodeAt(open) !== 40) return this.comparison()
    if (++this.depth > this.limits.maxDepth) {
      this.fail('limit', `The parentheses at position ${open} nest deeper than ${this.limits.maxDepth} levels.`, open)
    }
    this.i++
    const node = this.or()
    if (!this.eat(41)) this.expected(`")" (closing the "(" at position ${open})`)
    this.depth--
    return node
  }

  private expected (what: string): never {
    const at = this.i
    const found = at < this.text.length ? `"${this.text[at] as string}"` : 'the end of the expression'
    this.fail('syntax', `Expected ${what} at position ${at}, found ${found}.`, at, this.text[at])
  }

  private comparison (): FiqlComparison {
    const position = this.i
    while (this.i < this.text.length && !isReserved(this.text.charCodeAt(this.i))) this.i++
    if (this.i === position) this.expected('an attribute name or "("')
    if (++this.comparisons > this.limits.maxComparisons) {
      this.fail('limit', `The ${this.parameter} expression has more than ${this.limits.maxComparisons} comparisons; the one at position ${position} is one too many.`, position)
    }
    const selector = this.text.slice(position, this.i)
    this.skipSpace()
    const operatorAt = this.i
    const operator = this.operator()
    this.skipSpace()
    if (this.text.charCodeAt(this.i) !== 40) {
      return { kind: 'cmp', selector, position, operator, operatorAt, args: [this.value()], list: false }
    }
    return { kind: 'cmp', selector, position, operator, operatorAt, args: this.list(), list: true }
  }

  private operator (): string {
    const start = this.i
    const first = this.text.charCodeAt(start)
    let end = start + 1
    if (first === 61) while (end < this.text.length && isLetter(this.text.charCodeAt(end))) end++
    if ((first !== 33 && first !== 61) || this.text.charCodeAt(end) !== 61) this.expected('an operator such as == or =lt=')
    const token = this.text.slice(start, end + 1)
    this.i = end + 1
    if (!FIQL_OPERATORS.has(token)) {
      this.fail('operator', `Unknown operator "${token}" at position ${start}; use one of ${OPERATOR_LIST}.`, start, token)
    }
    return token
  }

  private list (): FiqlArgument[] {
    const open = this.i
    this.i++
    const args: FiqlArgument[] = []
    do {
      if (args.length === this.limits.maxListSize) {
        this.fail('limit', `The list at position ${open} has more than ${this.limits.maxListSize} values.`, open)
      }
      this.skipSpace()
      args.push(this.value())
    } while (this.eat(44))
    if (!this.eat(41)) this.expected('"," or ")" in the list')
    return args
  }

  private value (): FiqlArgument {
    const text = this.text
    const position = this.i
    const quote = text.charCodeAt(position)
    const quoted = quote === 34 || quote === 39
    const segments: string[] = []
    let escaped = '' // text already unescaped of the current segment
    let from = quoted ? position + 1 : position
    let wildcardAt = -1
    let i = from
    for (; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code === 92) {
        if (i + 1 === text.length) {
          this.fail('syntax', `The backslash at position ${i} must be followed by the character it escapes.`, i)
        }
        escaped += text.slice(from, i) + text[i + 1] as string
        from = ++i + 1
      } else if (code === 42) {
        segments.push(escaped + text.slice(from, i))
        escaped = ''
        from = i + 1
        if (wildcardAt < 0) wildcardAt = i
      } else if (quoted ? code === quote : isReserved(code)) {
        break
      }
    }
    if (quoted) {
      if (i === text.length) this.fail('syntax', `The quoted value at position ${position} has no closing quote.`, position)
      this.i = i + 1
    } else {
      if (i === position) this.expected('a value')
      this.i = i
    }
    segments.push(escaped + text.slice(from, i))
    return { segments, position, wildcardAt }
  }
}

/**
 * Parses a FIQL/RSQL expression into its untyped tree. Throws a QueryError naming
 * `parameter`, with the position of the fault, on a syntax error or an exceeded limit.
 */
export function parseFiql (text: string, parameter = 'filter', limits: Readonly<FiqlLimits> = DEFAULT_FIQL_LIMITS): FiqlNode {
  if (text.length > limits.maxLength) {
    throw new QueryError('limit', parameter,
      `The ${parameter} expression has ${text.length} characters; at most ${limits.maxLength} are allowed.`, limits.maxLength)
  }
  // PostgreSQL text cannot hold U+0000: refused here, or the database would fail the whole query (a 500).
  const nul = text.indexOf('\u0000')
  if (nul !== -1) {
    throw new QueryError('value', parameter, `The ${parameter} expression has a NUL character (U+0000) at position ${nul}, which no attribute can hold; remove it.`, nul)
  }
  return new Parser(text, parameter, limits).parse()
}
