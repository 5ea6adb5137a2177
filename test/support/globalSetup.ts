import pg from "pg"

/** The local test database of the machines this project is built on (trust auth). */
const localTestDatabase = "postgres://postgres@127.0.0.1:5432/test"

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
  } catch {
    // no local server: every test file starts its own embedded Postgres
  } finally {
    await client.end().catch(() => {})
  }
}
