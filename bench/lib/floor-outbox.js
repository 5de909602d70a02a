// The outbox of the events case's floor (bench/events.js, servers/floor-deliverer.js): a bare
// table, an identity key and the body, written by a trigger on the documents table in the
// transaction of each insert. The body is the contract's (`type`, `timestamp`, `data`: the row
// as JSON), its timestamp taken as the row is written. The trigger is made disabled: the
// benchmark enables it for the floor's rounds only.

export const FLOOR_TABLE = 'bench_floor_outbox'

/** The statements that make the table and the trigger on `documents`, and those that drop them. */
export const floorSchema = {
  create: [
    `CREATE TABLE ${FLOOR_TABLE} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload text NOT NULL)`,
    `CREATE FUNCTION bench_floor_emit () RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO ${FLOOR_TABLE} (payload) VALUES ('{"type":"document.created","timestamp":"'
        || to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","data":' || to_jsonb(NEW)::text || '}');
      RETURN NULL;
    END $$`,
    'CREATE TRIGGER bench_floor AFTER INSERT ON documents FOR EACH ROW EXECUTE FUNCTION bench_floor_emit ()',
    'ALTER TABLE documents DISABLE TRIGGER bench_floor'
  ],
  enable: 'ALTER TABLE documents ENABLE TRIGGER bench_floor',
  disable: 'ALTER TABLE documents DISABLE TRIGGER bench_floor',
  drop: [
    'DROP TRIGGER IF EXISTS bench_floor ON documents',
    'DROP FUNCTION IF EXISTS bench_floor_emit ()',
    `DROP TABLE IF EXISTS ${FLOOR_TABLE}`
  ]
}

/** The key the floor signs with, base64 (as a `whsec_` secret carries it). */
export const FLOOR_SECRET = Buffer.from('bench-floor-secret-0123456789abcdef').toString('base64')
