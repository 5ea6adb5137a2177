import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { retryingOnConnectionLoss } from "../db/connectionRetry.js"
import { rowsOrDie } from "../db/rows.js"

/** How an account's runs have been going: its last outcome and how many runs in a row failed. */
export interface AccountHealthState {
  readonly accountId: string
  readonly lastOutcome: "synced" | "failed"
  readonly failuresInARow: number
  readonly lastError: string | null
  readonly updatedAt: Date
}

const Row = Schema.Struct({
  account_id: Schema.String,
  last_outcome: Schema.Literal("synced", "failed"),
  failures_in_a_row: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  updated_at: Schema.DateFromSelf
})

/**
 * A finished run's outcome recorded, as AccountHealth.record does, in a statement of its own or in another's WITH
 * (AccountLeases' release): $1 the account, $3 the outcome, $4 the error.
 */
export const recordOutcomeStatement = `
  INSERT INTO account_health (account_id, last_outcome, failures_in_a_row, last_error, updated_at)
  VALUES ($1, $3, CASE WHEN $3 = 'failed' THEN 1 ELSE 0 END, $4, now())
  ON CONFLICT (account_id) DO UPDATE SET
    last_outcome = EXCLUDED.last_outcome,
    failures_in_a_row = CASE WHEN EXCLUDED.last_outcome = 'failed' THEN account_health.failures_in_a_row + 1 ELSE 0 END,
    last_error = EXCLUDED.last_error,
    updated_at = EXCLUDED.updated_at`

/** The `account_health` table: each account's run outcomes in a row (alerts on an account failing twice in a row). */
export class AccountHealth extends Context.Tag("account-sync/AccountHealth")<
  AccountHealth,
  {
    /** A finished run of the account: a success clears the count, a failure adds one. */
    readonly record: (accountId: string, outcome: "synced" | "failed", error: string | null) => Effect.Effect<void, SqlError.SqlError>
    readonly list: () => Effect.Effect<ReadonlyArray<AccountHealthState>, SqlError.SqlError>
  }
>() {}

export const AccountHealthLive = Layer.effect(
  AccountHealth,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Row,
      execute: () => sql`SELECT account_id, last_outcome, failures_in_a_row, last_error, updated_at FROM account_health ORDER BY account_id`
    })
    return AccountHealth.of(
      retryingOnConnectionLoss({
        record: (accountId: string, outcome: "synced" | "failed", error: string | null) =>
          Effect.asVoid(sql`
            INSERT INTO account_health (account_id, last_outcome, failures_in_a_row, last_error, updated_at)
            VALUES (${accountId}, ${outcome}, ${outcome === "failed" ? 1 : 0}, ${error}, now())
            ON CONFLICT (account_id) DO UPDATE SET
              last_outcome = EXCLUDED.last_outcome,
              failures_in_a_row = CASE WHEN EXCLUDED.last_outcome = 'failed' THEN account_health.failures_in_a_row + 1 ELSE 0 END,
              last_error = EXCLUDED.last_error,
              updated_at = EXCLUDED.updated_at`),
        list: () =>
          Effect.map(rowsOrDie(all(undefined)), (rows) =>
            rows.map((r) => ({ accountId: r.account_id, lastOutcome: r.last_outcome, failuresInARow: r.failures_in_a_row, lastError: r.last_error, updatedAt: r.updated_at }))
          )
      })
    )
  })
)
