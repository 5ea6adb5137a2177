import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsOrDie } from "../../db/rows.js"
import type { AnyStream } from "../streams/Stream.js"
import { historyTablesOf } from "./HistorySetting.js"

/** What applying SYNC_HISTORY changed. */
export interface HistoryChange {
  readonly started: ReadonlyArray<string>
  readonly stopped: ReadonlyArray<string>
}

/**
 * Makes the schema keep the history of exactly `streams` (their tables and their line items'): a table newly on
 * starts its history at its current rows (history_enable), a table no longer on stops (history_disable; its versions
 * stay). One process at a time (a transaction-scoped advisory lock): workers starting together agree.
 */
export const applyHistory = (streams: ReadonlyArray<AnyStream>): Effect.Effect<HistoryChange, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const wanted = new Map(streams.flatMap((s) => historyTablesOf(s).map((table) => [table, s.name] as const)))
    // a database an older version migrated (a test of a migration does this) has no history, nor asks for any
    const installed = yield* rowsOrDie(
      SqlSchema.single({
        Request: Schema.Void,
        Result: Schema.Struct({ present: Schema.Boolean }),
        execute: () => sql`SELECT to_regclass('history_tables') IS NOT NULL AS present`
      })(undefined)
    )
    if (!installed.present && wanted.size === 0) return { started: [], stopped: [] }
    const change = yield* sql.withTransaction(
      Effect.gen(function* () {
        // keyed by the schema: deployments sharing a database (each its DB_SCHEMA) do not wait on one another
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.account_sync.history'))`
        const tables = yield* rowsOrDie(
          SqlSchema.findAll({ Request: Schema.Void, Result: Schema.Struct({ table_name: Schema.String }), execute: () => sql`SELECT table_name FROM history_tables` })(undefined)
        )
        const on = new Set(tables.map((r) => r.table_name))
        const started = [...wanted.keys()].filter((t) => !on.has(t))
        const stopped = [...on].filter((t) => !wanted.has(t))
        for (const table of started) yield* sql`SELECT history_enable(${table}, ${wanted.get(table)!})`
        for (const table of stopped) yield* sql`SELECT history_disable(${table})`
        return { started, stopped }
      })
    )
    if (change.started.length > 0) yield* Effect.logInfo(`history kept from now on for ${change.started.join(", ")} (starting at their current rows)`)
    if (change.stopped.length > 0) yield* Effect.logInfo(`history no longer kept for ${change.stopped.join(", ")} (their versions stay)`)
    return change
  }).pipe(Effect.withSpan("History.apply"))
