import type { ComparisonOp, Comparison, FieldDescriptor, FieldMap, Filter, Operand } from '../../model/query.js'
import { QueryError } from './errors.js'
import { FIQL_OPERATORS, DEFAULT_FIQL_LIMITS, parseFiql, type FiqlComparison, type FiqlLimits, type FiqlNode } from './fiql.js'
import { MAX_PATH_DEPTH, pathDepth } from '../../model/fields.js'
import { describeType, expectation, parseScalar } from './values.js'

/*
 * Types a parsed FIQL tree against a resource's field map (conventions: "Advanced
 * filtering"): selectors must be filterable paths, values are converted by the field's
 * type, string operators and wildcards apply to text attributes only, and an array
 * attribute takes the operators of containment.
 */

const TEXT_OPS: ReadonlySet<ComparisonOp> = new Set(['contains', 'startswith', 'endswith', 'like', 'notlike'])
const ARRAY_OPS: ReadonlySet<ComparisonOp> = new Set(['eq', 'ne', 'in', 'out', 'isnull'])
const RANGE_OPS: ReadonlySet<ComparisonOp> = new Set(['lt', 'le', 'gt', 'ge'])

export interface FilterParseOptions {
  /** The query parameter the expression came from, for errors (default `filter`). */
  parameter?: string
  limits?: Readonly<FiqlLimits>
  /** Hybrid filter of an object attribute: selectors are paths inside it (`metadata`). */
  prefix?: string
  /** Hybrid filter of a scalar attribute: the one selector allowed, its own name. */
  selector?: string
}

class Checker {
  private readonly fields: FieldMap
  private readonly parameter: string
  private readonly prefix: string | undefined
  private readonly selector: string | undefined

  constructor (fields: FieldMap, parameter: string, prefix: string | undefined, selector: string | undefined) {
    this.fields = fields
    this.parameter = parameter
    this.prefix = prefix
    this.selector = selector
  }

  check (node: FiqlNode): Filter {
    if (node.kind === 'cmp') return this.comparison(node)
    return { kind: node.kind, children: node.children.map((child) => this.check(child)) }
  }

  private fail (reason: 'field' | 'operator' | 'value', message: string, position: number, value?: string): never {
    throw new QueryError(reason, this.parameter, message, position, value)
  }

  private field (node: FiqlComparison): FieldDescriptor {
    const { selector, position } = node
    if (this.selector !== undefined && selector !== this.selector) {
      this.fail('field', `The selector at position ${position} must be ${this.selector}, the attribute of ${this.parameter}.`, position, selector)
    }
    const path = this.prefix === undefined ? selector : `${this.prefix}.${selector}`
    const depth = pathDepth(path)
    if (depth > MAX_PATH_DEPTH) {
      this.fail('field', `The attribute "${selector}" at position ${position} nests more than ${MAX_PATH_DEPTH} levels.`, position, selector)
    }
    const field = depth === 0 ? undefined : this.fields.get(path)
    if (field === undefined || !field.filterable) {
      this.fail('field', `Unknown attribute "${selector}" at position ${position}; filterable attributes are ${this.known()}.`, position, selector)
    }
    return field
  }

  /** The selectors this expression may use, for the message of an unknown one. */
  private known (): string {
    const names: string[] = []
    for (const field of this.fields.values()) {
      if (!field.filterable) continue
      if (this.prefix === undefined) names.push(field.path)
      else if (field.path.startsWith(this.prefix + '.')) names.push(field.path.slice(this.prefix.length + 1))
    }
    return this.selector ?? names.join(', ')
  }

  private comparison (node: FiqlComparison): Comparison {
    const field = this.field(node)
    const { op, ci } = FIQL_OPERATORS.get(node.operator) as { op: ComparisonOp, ci: boolean }
    const at = node.operatorAt
    if (node.list && op !== 'in' && op !== 'out') {
      this.fail('operator', `A list of values is allowed only with =in= and =out=, not with ${node.operator} (position ${at}).`, at, node.operator)
    }
    if (TEXT_OPS.has(op) && field.type !== 'string') {
      this.fail('operator', `The operator ${node.operator} at position ${at} applies to text attributes only; ${node.selector} is ${describeType(field.type)}.`, at, node.operator)
    }
    if (!field.ordered && RANGE_OPS.has(op)) {
      this.fail('operator', `The operator ${node.operator} at position ${at} needs an order, and ${node.selector} has none (its values compare as equal or not); use ==, !=, =in=, =out= or a text operator.`, at, node.operator)
    }
    if (field.type === 'string-array' && !ARRAY_OPS.has(op)) {
      this.fail('operator', `The operator ${node.operator} at position ${at} does not apply to the array attribute ${node.selector}; use ==, !=, =in=, =out= or =isnull=.`, at, node.operator)
    }
    const patterns = op === 'like' || op === 'notlike' || ((op === 'eq' || op === 'ne') && field.type === 'string')
    const values: Operand[] = []
    for (const arg of node.args) {
      if (arg.wildcardAt >= 0 && !patterns) {
        this.fail('value', `The wildcard * at position ${arg.wildcardAt} works only with ==, != and =like= on text attributes; write \\* for a literal star.`, arg.wildcardAt, '*')
      }
      if (arg.wildcardAt >= 0 || op === 'like' || op === 'notlike') {
        values.push({ wildcard: arg.segments })
        continue
      }
      const text = arg.segments[0] as string
      const value = op === 'isnull'
        ? (text === 'true' ? true : text === 'false' ? false : undefined)
        : parseScalar(field, text)
      if (value === undefined) {
        const wanted = op === 'isnull' ? 'true or false' : expectation(field)
        this.fail('value', `The value "${text}" at position ${arg.position} is not ${wanted}, as ${node.selector} ${node.operator} needs.`, arg.position, text)
      }
      values.push(value)
    }
    return { kind: 'cmp', field: field.path, op, values, ci }
  }
}

/** Types a parsed tree; throws a QueryError naming the parameter and position. */
export function checkFiql (node: FiqlNode, fields: FieldMap, options: FilterParseOptions = {}): Filter {
  return new Checker(fields, options.parameter ?? 'filter', options.prefix, options.selector).check(node)
}

/** Parses and types one FIQL expression of `filter` or of a hybrid `<attribute>Filter`. */
export function parseFilter (text: string, fields: FieldMap, options: FilterParseOptions = {}): Filter {
  const parameter = options.parameter ?? 'filter'
  return checkFiql(parseFiql(text, parameter, options.limits ?? DEFAULT_FIQL_LIMITS), fields, options)
}
