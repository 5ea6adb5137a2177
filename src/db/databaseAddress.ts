import { Option, Redacted } from "effect"

/**
 * Where the warehouse is, for a person: `host:port/database` of DATABASE_URL (never its user or password), or the
 * embedded Postgres under DATA_DIR. A URL that does not parse is named by the key alone.
 */
export const databaseAddress = (url: Option.Option<Redacted.Redacted<string>> | string | undefined, dataDir: string): string => {
  const text = typeof url === "string" ? url : url === undefined ? undefined : Option.getOrUndefined(Option.map(url, Redacted.value))
  if (text === undefined || text === "") return `the embedded Postgres under DATA_DIR (${dataDir})`
  try {
    const parsed = new URL(text)
    const host = parsed.hostname || parsed.searchParams.get("host") || "localhost"
    return `Postgres at ${host}:${parsed.port || "5432"}${parsed.pathname.length > 1 ? parsed.pathname : ""} (DATABASE_URL)`
  } catch {
    return "Postgres at DATABASE_URL"
  }
}
