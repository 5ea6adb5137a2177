import { Context } from "effect"
import * as crypto from "node:crypto"
import type pg from "pg"

export interface PreparedStatementsShape {
  /**
   * Keeps `text` prepared on each connection: a statement sent for every page with the same text (a stream's page
   * statement) is then parsed, analyzed and planned once per connection instead of once per page: about a quarter of
   * the backend CPU of a page of jobs (docs/performance.md, "Postgres settings"). Returns the text.
   */
  readonly keep: (text: string) => string
  /** Whether kept texts are sent as named statements (false on a single-session database or when turned off). */
  readonly enabled: boolean
}

/** The texts a database layer keeps prepared; built by that layer (it knows whether the database allows it). */
export class PreparedStatements extends Context.Tag("account-sync/PreparedStatements")<PreparedStatements, PreparedStatementsShape>() {}

/**
 * A registry, and the pool hook that makes a connection send the registered texts as named statements (pg parses a
 * named statement on a connection once, then only binds and executes it); every other statement goes as before.
 * `enabled` is decided once the database said what it is: never on the embedded Postgres, whose connections share
 * one session, where a name prepared by one connection exists for the others too.
 */
export const makePreparedStatements = () => {
  const registered = new Map<string, string>()
  const registry = {
    enabled: false,
    keep: (text: string): string => {
      if (registry.enabled && !registered.has(text)) {
        registered.set(text, `as_${crypto.createHash("sha256").update(text).digest("hex").slice(0, 24)}`)
      }
      return text
    },
    attach: (client: pg.PoolClient): void => {
      const query = client.query.bind(client) as (...args: ReadonlyArray<unknown>) => unknown
      const named = (...args: ReadonlyArray<unknown>): unknown => {
        const [text, values, callback] = args
        const name = typeof text === "string" && Array.isArray(values) ? registered.get(text) : undefined
        return name === undefined ? query(...args) : query({ name, text, values }, callback)
      }
      client.query = named as typeof client.query
    }
  }
  return registry
}
