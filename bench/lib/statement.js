// The statement the service runs for one collection query string, built with the suite's own
// pieces (filter model, field map, compiler, select list): the bare baselines run exactly it.
import { fieldMapOf } from '../../dist/plugins/resource/collection.js'
import { selectList } from '../../dist/plugins/resource/representation.js'
import { buildFilter, splitFilterParams } from '../../dist/plugins/query/filter.js'
import { orderingResolver } from '../../dist/plugins/query/ordering.js'
import { compileSql, selectStatement } from '../../dist/store/sql-query.js'
import { quoteIdent } from '../../dist/store/quote.js'

/** The statement registerCollections (plugins/resource/collection.ts) runs for `queryString` in execution context `ctx`. */
export function statementOf (def, queryString, ctx = 'prod') {
  const fields = fieldMapOf(def)
  const params = new URLSearchParams(queryString)
  // Filter parameters in code-point order, as the query plugin reads them (read.ts).
  const filters = {}
  for (const name of [...new Set(params.keys())].sort()) {
    if (name === 'ordering' || name === 'limit') continue
    const values = params.getAll(name)
    filters[name] = values.length === 1 ? values[0] : values
  }
  const query = {
    filter: buildFilter(splitFilterParams(filters, fields), fields),
    ordering: orderingResolver(fields)(params.getAll('ordering')),
    paging: { kind: 'cursor', limit: Number(params.get('limit') ?? 20) }
  }
  const summary = selectList({ ...def, columns: def.columns.filter(c => !def.summaryOmit.includes(c.field)) })
  const sql = compileSql(query, fields, { paramStart: 2 })
  return selectStatement(sql, { select: summary, from: `${quoteIdent(def.table)} t`, where: 't.ctx = $1', params: [ctx] })
}
