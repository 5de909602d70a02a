import { quoteIdent } from './quote.js'

export interface NotifyTrigger {
  /** The table whose rows come due; its name is the channel (`Store.listen`). */
  table: string
  /**
   * Besides every insert, the updates that make a row due again: `columns` the statement must
   * set, `when` a condition on OLD and NEW (SQL from code, never from input).
   */
  due?: { columns: readonly string[], when: string }
}

/**
 * The SQL of a migration that makes the database itself wake the workers of `table`: a NOTIFY
 * on the channel named like the table whenever a row is inserted (or comes due again), in the
 * writer's transaction, so whoever writes, and however (one statement of CTEs included), the
 * listeners hear of it once the transaction commits.
 *
 * FOR EACH ROW rather than FOR EACH STATEMENT: it fires only for rows actually written, so a
 * write whose outbox join finds no subscriber inserts nothing and notifies nothing, where a
 * statement trigger fires on every write; and it needs no transition table, which would copy
 * every inserted row (payload and all). On a single-row insert it is one call either way.
 * Many rows cost one call each, but one notification: PostgreSQL sends identical notifications
 * of a transaction once.
 */
export function notifyTriggerSql ({ table, due }: NotifyTrigger): string {
  const T = quoteIdent(table)
  const fn = quoteIdent(`${table}_notify`)
  const insert = quoteIdent(`${table}_notify_insert`)
  const sql = [
    `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify(TG_TABLE_NAME, '');
      RETURN NULL;
    END
    $$`,
    `DROP TRIGGER IF EXISTS ${insert} ON ${T}`,
    `CREATE TRIGGER ${insert} AFTER INSERT ON ${T} FOR EACH ROW EXECUTE FUNCTION ${fn}()`
  ]
  if (due !== undefined) {
    const name = quoteIdent(`${table}_notify_due`)
    sql.push(
      `DROP TRIGGER IF EXISTS ${name} ON ${T}`,
      `CREATE TRIGGER ${name} AFTER UPDATE OF ${due.columns.map(quoteIdent).join(', ')} ON ${T} FOR EACH ROW
      WHEN (${due.when}) EXECUTE FUNCTION ${fn}()`
    )
  }
  return sql.join(';\n')
}
