import pg from "pg"

/** The local test database of the machines this project is built on (trust auth). */
const localTestDatabase = "postgres://postgres@127.0.0.1:5432/test"

/**
 * Every file makes a schema of its own and drops it: the catalog tables of the test database keep the dead rows, and
 * grew run after run (after 4 runs of the suite pg_attribute held 604 MB, the database 1.1 GB, and Postgres spent 198
 * CPU s on a run against 128 on a fresh one). Compacted before each run (0.7 s after two runs); skipped where the
 * role may not (not the tables' owner).
 */
const compactCatalog = async (client: pg.Client) => {
  const tables = ["pg_attribute", "pg_class", "pg_depend", "pg_description", "pg_policy", "pg_index", "pg_type", "pg_constraint", "pg_proc", "pg_attrdef"]
  const owner = await client.query<{ owns: boolean }>("SELECT pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = 'pg_catalog.pg_attribute'::regclass), 'USAGE') AS owns")
  if (owner.rows[0]?.owns !== true) return
  await client.query(`VACUUM FULL ${tables.map((t) => `pg_catalog.${t}`).join(", ")}`)
}

/**
 * Before any test file: which Postgres the suite uses. TEST_DATABASE_URL when set (`embedded`: none, each file starts
 * an in-memory embedded Postgres); unset, the local test database when it answers within 2 s, else embedded.
 * Test files read TEST_DATABASE_URL; the workers inherit this process's environment.
 */
export default async function chooseTestDatabase() {
  const configured = process.env.TEST_DATABASE_URL
  if (configured === "embedded") {
    delete process.env.TEST_DATABASE_URL
    return
  }
  if (configured !== undefined) return
  const client = new pg.Client({ connectionString: localTestDatabase, connectionTimeoutMillis: 2_000 })
  try {
    await client.connect()
    await client.query("SELECT 1")
    process.env.TEST_DATABASE_URL = localTestDatabase
    // best effort: a catalog left as it is only slows the run
    await compactCatalog(client).catch(() => {})
  } catch {
    // no local server: every test file starts its own embedded Postgres
  } finally {
    await client.end().catch(() => {})
  }
}
