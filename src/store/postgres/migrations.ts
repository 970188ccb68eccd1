/**
 * The PostgreSQL store's schema migrations: numbered, recorded in `fleetbook_schema`, each applied once in a
 * transaction of its own. Replicas starting together take turns under an advisory lock: the first applies what
 * is missing, the others find it applied.
 */
import type pg from 'pg';
import { ConfigError } from '../../errors.js';
import {
  clientConfig,
  describeUrl,
  FENCE_ERROR,
  HELD_ERROR,
  openPool,
  OWNER_LOCKS,
  withClient,
} from './pool.js';
import { POSTGRES_RATES_MIGRATION } from './rates.js';
import { POSTGRES_LOGINS_MIGRATION } from './logins.js';

/**
 * Schema migrations, in order. Never edit one that has shipped: add the next. The tables mean what the SQLite
 * store's mean (sqlite-migrations.ts), in PostgreSQL's shapes: ids and times that are ordered compare as bytes
 * (COLLATE "C"), as SQLite and the code compare them; sequence numbers and lease times are bigints.
 */
export const MIGRATIONS: string[] = [
  `CREATE TABLE runs (
     id text COLLATE "C" PRIMARY KEY,
     playbook text COLLATE "C" NOT NULL,
     status text NOT NULL,
     trigger_json text,
     inputs_json text,
     started_at text COLLATE "C" NOT NULL,
     ended_at text,
     summary_json text,
     error text,
     event_json text,
     owner text
   );
   CREATE INDEX runs_by_start ON runs (started_at, id);
   CREATE INDEX runs_by_playbook ON runs (playbook, started_at, id);
   CREATE INDEX runs_by_status ON runs (status, started_at, id);

   CREATE TABLE run_steps (
     run_id text COLLATE "C" NOT NULL,
     step_key text COLLATE "C" NOT NULL,
     state_json text NOT NULL,
     PRIMARY KEY (run_id, step_key)
   );

   CREATE TABLE step_items (
     run_id text COLLATE "C" NOT NULL,
     step_key text COLLATE "C" NOT NULL,
     seq integer NOT NULL,
     runs_json text NOT NULL,
     PRIMARY KEY (run_id, step_key, seq)
   );

   -- The ledger in entries: one row per group of devices with the same result in one write, their ids a JSON
   -- array, and each one's data (a location) a JSON array in the same order. A later entry for the same run,
   -- step and device replaces an earlier one (seq orders them; a run's entries come from one replica, which
   -- commits its turns one after the other).
   CREATE TABLE ledger (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     run_id text COLLATE "C" NOT NULL,
     step text COLLATE "C" NOT NULL,
     kind text NOT NULL,
     outcome text NOT NULL,
     error_type text,
     error_class text,
     attempts integer NOT NULL,
     at text COLLATE "C" NOT NULL,
     device_ids json NOT NULL,
     request_id text,
     data_json json
   );
   CREATE INDEX ledger_by_run ON ledger (run_id, step, seq);
   CREATE INDEX ledger_by_error ON ledger (error_type) WHERE error_type IS NOT NULL;

   -- The ledger a row per device, each device's latest result in each step of each run, for SQL.
   CREATE VIEW device_results AS
     SELECT DISTINCT ON (l.run_id, l.step, d.device_id)
       l.run_id, l.step, d.device_id, l.kind, l.outcome, l.error_type, l.error_class, l.attempts, l.at,
       l.request_id,
       CASE WHEN json_typeof(l.data_json -> (d.n - 1)::int) <> 'null' THEN l.data_json -> (d.n - 1)::int END
         AS data_json
     FROM ledger l CROSS JOIN LATERAL json_array_elements_text(l.device_ids) WITH ORDINALITY AS d(device_id, n)
     ORDER BY l.run_id, l.step, d.device_id, l.seq DESC;

   -- The callback inbox. Each message is held by the owner that stored it (or claimed it from one gone).
   CREATE TABLE inbox (
     id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     service text NOT NULL,
     kind text NOT NULL,
     request_id text NOT NULL,
     device text NOT NULL DEFAULT '',
     payload_json text NOT NULL,
     received_at text NOT NULL,
     processed_at text,
     owner text,
     UNIQUE (request_id, kind, device)
   );
   CREATE INDEX inbox_pending_by_owner ON inbox (owner, id) WHERE processed_at IS NULL;

   CREATE TABLE schedules (
     name text PRIMARY KEY,
     last_fire_at text COLLATE "C" NOT NULL
   );

   CREATE TABLE owners (
     id text PRIMARY KEY,
     role text NOT NULL,
     pid integer NOT NULL,
     host text NOT NULL,
     boot text NOT NULL,
     started_at text COLLATE "C" NOT NULL,
     lease_until bigint NOT NULL
   );

   -- A row per locked device: the primary key makes two owners' locks on one device impossible. holder is the
   -- acquisition that took it (released together), owner the process it belongs to. No index by owner: each
   -- index costs an acquisition of 10,000 devices some 15 ms, and only the rare removal of an owner reads by it,
   -- over a table of the locks held now.
   CREATE TABLE device_locks (
     device_id text COLLATE "C" PRIMARY KEY,
     owner text NOT NULL,
     holder text NOT NULL
   );
   CREATE INDEX device_locks_by_holder ON device_locks (holder);`,
  // Each API area's rate budget, shared by the replicas (rate/shares.ts).
  POSTGRES_RATES_MIGRATION,
  // The fence of a replica's writes (Ownership.fence): its lease must hold as they commit. The transaction holds
  // a shared advisory lock of the owner until then (in memory: no row is written), so that a claim of its runs,
  // which first takes that lock exclusively for each owner whose lease expired and removes it, waits for that
  // commit and sees what it wrote; once removed, the owner's writes fail here.
  `CREATE FUNCTION fleetbook_fence(fenced text, now_ms bigint) RETURNS void LANGUAGE plpgsql AS $$
   BEGIN
     PERFORM pg_advisory_xact_lock_shared(${OWNER_LOCKS}, hashtext(fenced));
     PERFORM 1 FROM owners WHERE id = fenced AND lease_until > now_ms;
     IF NOT FOUND THEN
       RAISE EXCEPTION 'the lease of owner % was lost', fenced USING ERRCODE = '${FENCE_ERROR}';
     END IF;
   END $$;`,
  // The devices of an ended run with more than one result in a step, and the entry whose result counts: written
  // the first time the console pages through the run (latestAmong), as on SQLite.
  `CREATE TABLE ledger_latest (
     run_id text COLLATE "C" NOT NULL,
     step text COLLATE "C" NOT NULL,
     device_id text COLLATE "C" NOT NULL,
     seq bigint NOT NULL,
     PRIMARY KEY (run_id, step, device_id)
   );
   CREATE TABLE ledger_latest_runs (run_id text COLLATE "C" PRIMARY KEY);`,
  // Of those runs, the entries every device of which has a later result: pages pass over them. Runs kept
  // before it are grouped again.
  `CREATE TABLE ledger_superseded (
     run_id text COLLATE "C" NOT NULL,
     seq bigint NOT NULL,
     PRIMARY KEY (run_id, seq)
   );
   TRUNCATE ledger_latest, ledger_latest_runs;`,
  // A device lock in one statement (Ownership.lockDevices): fenced, then every device of the acquisition taken
  // (see ownership.ts), or none of them, undone when one was short; the answer is then the first device, in the
  // caller's order, another owner holds. One round trip, where a transaction took two.
  // The statements of the functions are planned once per connection, not at every call as the connections'
  // force_custom_plan would have it (pool.ts): planning them was a third of the database's CPU on a daemon.
  `ALTER FUNCTION fleetbook_fence(text, bigint) SET plan_cache_mode = force_generic_plan;
   CREATE FUNCTION fleetbook_lock(taker text, acquisition text, wanted json, now_ms bigint, fenced text)
     RETURNS text LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
   DECLARE
     taken bigint;
     held text;
   BEGIN
     IF fenced IS NOT NULL THEN
       PERFORM fleetbook_fence(fenced, now_ms);
     END IF;
     BEGIN
       INSERT INTO device_locks (device_id, owner, holder)
         SELECT DISTINCT value COLLATE "C", taker, acquisition FROM json_array_elements_text(wanted) ORDER BY 1
         ON CONFLICT (device_id) DO UPDATE SET owner = excluded.owner, holder = excluded.holder
           WHERE device_locks.owner = excluded.owner
             OR NOT EXISTS (SELECT 1 FROM owners o WHERE o.id = device_locks.owner AND o.lease_until > now_ms);
       GET DIAGNOSTICS taken = ROW_COUNT;
       IF taken < (SELECT count(DISTINCT value) FROM json_array_elements_text(wanted)) THEN
         RAISE EXCEPTION 'a device is held' USING ERRCODE = '${HELD_ERROR}';
       END IF;
       RETURN NULL;
     EXCEPTION WHEN SQLSTATE '${HELD_ERROR}' THEN
       SELECT w.value INTO held
         FROM json_array_elements_text(wanted) WITH ORDINALITY AS w(value, n)
         JOIN device_locks l ON l.device_id = w.value COLLATE "C"
         WHERE l.owner <> taker ORDER BY w.n LIMIT 1;
       -- Released since: taken by nobody now, but not by this acquisition either, which asks again.
       RETURN coalesce(held, (SELECT value FROM json_array_elements_text(wanted) LIMIT 1));
     END;
   END $$;`,
  // The device locks of many acquisitions of one owner in one statement (Ownership.lockDevices batches those
  // asked for while one is on its way): fenced once, then every device of every acquisition taken in one insert
  // in the order of the device ids, as one acquisition's are (two replicas' batches wait for each other, never
  // deadlock); an acquisition short of a device gives back what it took. The answer names, for each such
  // acquisition, the first device in the caller's order another owner holds. The acquisitions of one batch have
  // no device in common (the caller sees to it). fleetbook_lock stays for the replicas of the version before,
  // during an upgrade.
  `CREATE FUNCTION fleetbook_lock_all(taker text, wanted json, now_ms bigint, fenced text)
     RETURNS json LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
   DECLARE
     short text[];
   BEGIN
     IF fenced IS NOT NULL THEN
       PERFORM fleetbook_fence(fenced, now_ms);
     END IF;
     WITH w AS (
       SELECT a.holder, d.value COLLATE "C" AS device_id
         FROM json_to_recordset(wanted) AS a(holder text, ids json), json_array_elements_text(a.ids) AS d
     ), taken AS (
       INSERT INTO device_locks (device_id, owner, holder)
         SELECT DISTINCT ON (device_id) device_id, taker, holder FROM w ORDER BY device_id
         ON CONFLICT (device_id) DO UPDATE SET owner = excluded.owner, holder = excluded.holder
           WHERE device_locks.owner = excluded.owner
             OR NOT EXISTS (SELECT 1 FROM owners o WHERE o.id = device_locks.owner AND o.lease_until > now_ms)
         RETURNING holder
     )
     SELECT array_agg(wanted_by.holder) INTO short
       FROM (SELECT holder, count(DISTINCT device_id) AS n FROM w GROUP BY holder) wanted_by
       LEFT JOIN (SELECT holder, count(*) AS n FROM taken GROUP BY holder) taken_by USING (holder)
       WHERE coalesce(taken_by.n, 0) < wanted_by.n;
     IF short IS NULL THEN
       RETURN NULL;
     END IF;
     DELETE FROM device_locks WHERE holder = ANY(short);
     -- Released since: taken by nobody now, but not by this acquisition either, which asks again.
     RETURN (SELECT json_object_agg(a.holder, coalesce(
         (SELECT d.value FROM json_array_elements_text(a.ids) WITH ORDINALITY AS d(value, n)
            JOIN device_locks l ON l.device_id = d.value COLLATE "C"
            WHERE l.owner <> taker ORDER BY d.n LIMIT 1),
         a.ids->>0))
       FROM json_to_recordset(wanted) AS a(holder text, ids json) WHERE a.holder = ANY(short));
   END $$;`,
  // The messages not yet processed: a row each in inbox_pending, with the owner holding it, deleted when the
  // message is processed. Marking inbox's row processed was an UPDATE that could not be HOT (processed_at was in
  // the pending index's predicate): a new version of the row and of its two unique keys, about 60 us of the
  // database's CPU a message, where the delete costs 6. A trigger adds the rows, so that the messages a replica
  // of the version before stores during an upgrade are pending too; the column processed_at goes, so that such a
  // replica's statements that read or mark it fail rather than process a message twice (its messages wait for
  // the replicas of this version, which take them up once it is gone).
  `CREATE TABLE inbox_pending (
     id bigint PRIMARY KEY,
     owner text
   );
   CREATE INDEX inbox_pending_owner ON inbox_pending (owner, id);
   INSERT INTO inbox_pending (id, owner) SELECT id, owner FROM inbox WHERE processed_at IS NULL;
   CREATE FUNCTION fleetbook_inbox_pending() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO inbox_pending (id, owner) SELECT id, owner FROM stored;
     RETURN NULL;
   END $$;
   CREATE TRIGGER inbox_pending AFTER INSERT ON inbox REFERENCING NEW TABLE AS stored
     FOR EACH STATEMENT EXECUTE FUNCTION fleetbook_inbox_pending();
   ALTER TABLE inbox DROP COLUMN processed_at;`,
  // The version of the playbook each run was created with, and each version's definition (playbook/version.ts):
  // a run resumed after its playbook changed finishes with the steps it started with.
  `ALTER TABLE runs ADD COLUMN version text;
   CREATE TABLE playbook_versions (
     version text COLLATE "C" PRIMARY KEY,
     definition_json text NOT NULL,
     saved_at text NOT NULL
   );`,
  // Retention (retention.ts) finds the runs that ended before a time by this, not a scan of every run.
  `CREATE INDEX runs_by_end ON runs (ended_at) WHERE ended_at IS NOT NULL;`,
  // A cancel asked of the process that holds a run (Ownership.requestCancel), with its reason.
  `ALTER TABLE runs ADD COLUMN cancel_requested text;`,
  // The devices left unconfirmed, whose CarrierService message may come after their run ended (Store.recordLate):
  // few, and looked up often.
  `CREATE INDEX ledger_unconfirmed ON ledger (seq) WHERE outcome = 'unconfirmed' AND request_id IS NOT NULL;`,
  // Retention removes the playbook versions no run names any more (retention.ts): found by this.
  `CREATE INDEX runs_by_version ON runs (version) WHERE version IS NOT NULL;`,
  // A device's history (deviceHistory) reads the entries whose least and greatest device ids bracket it, found by
  // this index (id-range.ts), not every entry of the database. The entries written before get theirs here,
  // and those a replica of the version before writes during an upgrade get theirs from the trigger.
  `ALTER TABLE ledger ADD COLUMN min_id text COLLATE "C", ADD COLUMN max_id text COLLATE "C";
   CREATE FUNCTION fleetbook_id_range(ids json, OUT min_id text, OUT max_id text) LANGUAGE plpgsql AS $$
   BEGIN
     SELECT min(d.id COLLATE "C"), max(d.id COLLATE "C") INTO min_id, max_id
       FROM json_array_elements_text(ids) AS d(id);
   EXCEPTION WHEN untranslatable_character THEN
     -- An id that text cannot hold (a NUL): the range is open, and the entry always read.
     min_id := '';
     max_id := NULL;
   END $$;
   CREATE FUNCTION fleetbook_ledger_range() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     SELECT r.min_id, r.max_id INTO NEW.min_id, NEW.max_id FROM fleetbook_id_range(NEW.device_ids) r;
     RETURN NEW;
   END $$;
   CREATE TRIGGER ledger_range BEFORE INSERT ON ledger FOR EACH ROW WHEN (NEW.min_id IS NULL)
     EXECUTE FUNCTION fleetbook_ledger_range();
   UPDATE ledger SET (min_id, max_id) = (SELECT r.min_id, r.max_id FROM fleetbook_id_range(device_ids) r);
   CREATE INDEX ledger_by_device_range ON ledger (min_id, max_id);`,
  // An ended run's grouping keeps only its superseded entries, marked in ledger_superseded_runs of its own: which
  // result of a device counts is read from the entries whose range holds it. A replica of the version before
  // still keeps a row per device with several results in ledger_latest, under its own mark, for its own reads;
  // retention removes them with their runs.
  `CREATE TABLE ledger_superseded_runs (run_id text COLLATE "C" PRIMARY KEY);
   INSERT INTO ledger_superseded_runs SELECT run_id FROM ledger_latest_runs;`,
  // A list of devices sent again (a streamed report's devices.retry) keeps the error each run of its devices was
  // sent again for in a column of its own (item-runs.ts), not in the run's kind. A replica of the version before
  // writes none, and reads none: it reads only the lists it wrote, in the same execution of a step.
  `ALTER TABLE step_items ADD COLUMN errors_json text;`,
  // A dry run is taken up after a crash as a dry run (RunRecord.dryRun), never as a run that acts. A replica of the
  // version before writes false, and takes any run up as it was: replace the old replicas promptly.
  `ALTER TABLE runs ADD COLUMN dry_run boolean NOT NULL DEFAULT false;`,
  // The session logins that may have failed, counted by every replica and process on the database
  // (api/login-count.ts): five consecutive failed logins lock the user, whichever process sent them.
  POSTGRES_LOGINS_MIGRATION,
  // The calls of a step under way, written as each request leaves (step-calls.ts): a few bytes, not its checkpoint.
  // A replica of the version before writes none: it keeps them in the checkpoint, which is read as before.
  `CREATE TABLE step_calls (
     run_id text COLLATE "C" NOT NULL,
     step_key text COLLATE "C" NOT NULL,
     calls integer NOT NULL,
     attempts integer NOT NULL,
     PRIMARY KEY (run_id, step_key)
   );`,
  // The last time a prune pass found each schedule loaded (Retention.recordLoaded): the backfills of a schedule
  // no replica has loaded for a day are pruned, not those of one that a replica on older playbooks still has. A
  // replica of the version before records none: a schedule it alone has is recorded at the next pass of a newer
  // one, and kept a day from then.
  `ALTER TABLE schedules ADD COLUMN loaded_at text COLLATE "C";`,
  // The devices confirmed by a read of their state, not the service's word (DeviceResult.byStateRead): a
  // CarrierService message that comes after their run ended supersedes the read (Store.recordLate). Looked up
  // with those left unconfirmed, by one index of both. A replica of the version before writes none (its state
  // reads stay as they were) and looks up the unconfirmed ones alone, by the index it keeps.
  `ALTER TABLE ledger ADD COLUMN by_state_read boolean;
   CREATE INDEX ledger_late ON ledger (seq)
     WHERE request_id IS NOT NULL AND (outcome = 'unconfirmed' OR by_state_read);`,
  // The results a CarrierService message gave while the run went on, for devices its steps settled by a read of
  // their state (Store.recordLate): the run's summary, written as it ends, is read with them (store/late.ts). A
  // replica of the version before records none while a run goes on, and reads a summary without them.
  `ALTER TABLE runs ADD COLUMN late_moves_json text;`,
];

/** The advisory lock under which migrations are applied: one replica at a time. */
const MIGRATION_LOCK = 0x666c6565;

/**
 * Applies the migrations `database` lacks, one transaction each, under a session lock that other replicas wait
 * for; refuses a database at a newer version than this fleetbook knows. A migration that fails is rolled back, and
 * the error names it and the version the database stays at. Returns the version it is at.
 */
export function migrate(pool: pg.Pool, database: string): Promise<number> {
  return withClient(pool, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      // Created only when missing: even `CREATE TABLE IF NOT EXISTS` needs the right to create in the schema,
      // which a user that only reads and writes a migrated database's tables does not have.
      const { rows: found } = await client.query<{ found: boolean }>(
        "SELECT to_regclass('fleetbook_schema') IS NOT NULL AS found",
      );
      if (!found[0]?.found)
        await client
          .query(
            `CREATE TABLE fleetbook_schema (
               version integer PRIMARY KEY,
               applied_at timestamptz NOT NULL DEFAULT now()
             )`,
          )
          .catch((e: unknown) => {
            throw new ConfigError(`cannot open ${database}: ${withRightsHint(e)}`);
          });
      const { rows } = await client.query<{ version: number }>(
        'SELECT coalesce(max(version), 0) AS version FROM fleetbook_schema',
      );
      const version = rows[0]?.version ?? 0;
      if (version > MIGRATIONS.length)
        throw new ConfigError(
          `${database} is at schema version ${version}, newer than this fleetbook (${MIGRATIONS.length}); upgrade fleetbook`,
        );
      for (let v = version + 1; v <= MIGRATIONS.length; v++) {
        await client.query('BEGIN');
        try {
          await client.query(MIGRATIONS[v - 1] as string);
          await client.query('INSERT INTO fleetbook_schema (version) VALUES ($1)', [v]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK');
          // Said as a migration's failure, with where the database stays: the driver's message alone (`relation
          // ... already exists`) read as a database that cannot be opened at all.
          throw new ConfigError(
            `${database}: schema migration ${v} failed and was rolled back, so it stays at version ${v - 1}; \`fleetbook store migrate\` (or a start) applies the rest once the cause is fixed: ${withRightsHint(e)}`,
          );
        }
      }
      return MIGRATIONS.length;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  });
}

/** `fleetbook store migrate`: applies the migrations the database at `url` lacks, and returns its version. */
export async function migratePostgres(url: string, origin?: string): Promise<number> {
  let pool: pg.Pool;
  try {
    pool = openPool(clientConfig(url, 'fleetbook', origin), { maxConnections: 2 });
  } catch (e) {
    throw cannotOpen(url, e, origin);
  }
  try {
    return await migrate(pool, describeUrl(url, origin)).catch((e: unknown) => {
      throw cannotOpen(url, e, origin);
    });
  } finally {
    await pool.end();
  }
}

/** PostgreSQL's `insufficient_privilege`: `permission denied for schema public`, for a table. */
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * The server's message of a statement that creates or changes the schema, and when it refused the user a right,
 * what that needs: the user of a replica may only read and write the tables (docs/replicas.md), and a fresh
 * database (or an upgrade) needs them created or changed.
 */
function withRightsHint(e: unknown): string {
  const message = (e as Error).message;
  return (e as { code?: string }).code === INSUFFICIENT_PRIVILEGE
    ? `${message}: this user cannot create or change the store's tables, which the first start on a database (and an upgrade that adds a migration) needs: run \`fleetbook store migrate\` as a user that can, then start with this one (docs/replicas.md: the user's rights)`
    : message;
}

/** An error opening the database, naming it (without its password) and where it comes from. */
export function cannotOpen(url: string, e: unknown, origin = 'FLEETBOOK_STATE'): Error {
  if (e instanceof ConfigError) return e;
  // Node's own message is `Invalid URL`, whatever is wrong: say what the URL should look like instead.
  if ((e as { code?: string }).code === 'ERR_INVALID_URL')
    return new ConfigError(
      `${origin} is not a URL fleetbook can read: postgres://user:password@host:port/database?parameters, with any of @ : / ? # % in the user or the password percent-encoded (%40 %3A %2F %3F %23 %25)`,
    );
  // The driver's SCRAM exchange, when the server asks for a password and neither the URL nor PGPASSWORD gave one
  // (or an empty one): its message names its protocol's step, not what is missing.
  if (
    /^SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a (non-empty )?string$/.test(
      (e as Error).message,
    )
  )
    return new ConfigError(
      `cannot open ${describeUrl(url, origin)}: the server asks for a password: give it in the URL (postgres://user:password@host:port/database) or in PGPASSWORD`,
    );
  // A server's own error (a bad password, a database that does not exist) or a network one (refused, unknown host).
  return new ConfigError(`cannot open ${describeUrl(url, origin)}: ${(e as Error).message}`);
}
