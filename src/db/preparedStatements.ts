import * as crypto from "node:crypto"
import type pg from "pg"

/** Statement text -> the name it is prepared under. */
const registered = new Map<string, string>()

/**
 * Keeps `text` prepared on each connection of a real Postgres: a statement sent for every page with the same text
 * (a stream's page statement) is then parsed, analyzed and planned once per connection instead of once per page
 * (measured on the jobs page statement: 3.25 -> 2.35 ms of backend CPU per page of 100 jobs). Returns the text.
 */
export const keepPrepared = (text: string): string => {
  if (!registered.has(text)) registered.set(text, `as_${crypto.createHash("sha256").update(text).digest("hex").slice(0, 24)}`)
  return text
}

/**
 * Makes a pool client send the registered texts as named statements (pg parses a named statement on a connection
 * once, then only binds and executes it); every other statement goes as before. Not for the embedded Postgres:
 * its connections share one session, where a name prepared by one connection exists for the others too.
 */
export const prepareRegisteredStatements = (client: pg.PoolClient): void => {
  const query = client.query.bind(client) as (...args: ReadonlyArray<unknown>) => unknown
  const named = (...args: ReadonlyArray<unknown>): unknown => {
    const [text, values, callback] = args
    const name = typeof text === "string" && Array.isArray(values) ? registered.get(text) : undefined
    return name === undefined ? query(...args) : query({ name, text, values }, callback)
  }
  client.query = named as typeof client.query
}
