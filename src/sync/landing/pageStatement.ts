import type { SqlClient, Statement } from "@effect/sql"
import { Schema } from "effect"
import type { LandingStep, PageValues } from "./LandingStep.js"

/** What the page statement reports. */
export const PageLanded = Schema.Struct({
  /** The pass was still in progress (false: a repeat of a page that had committed; nothing was written). */
  open: Schema.Boolean,
  tracks_seen: Schema.NullOr(Schema.Boolean),
  /** Rows inserted or changed. */
  written: Schema.Number,
  /** Line items the page's parents did not return while counting more of them: not proven gone, kept live. */
  kept: Schema.Number,
  /** This run still held the account's lock (false: nothing was written; the run must stop). */
  held: Schema.Boolean
})
export type PageLanded = typeof PageLanded.Type

/**
 * One statement for a batch of pages: `WITH <step>, <step>, ... SELECT open, tracks_seen, written, held`. One statement is
 * one transaction: the rows and their cursor commit together, with one round trip. Its text depends only on the
 * stream and the steps (every value is a parameter), so it is prepared once per connection.
 */
export const pageStatement = (sql: SqlClient.SqlClient, steps: ReadonlyArray<LandingStep>, values: PageValues): Statement.Statement<unknown> => {
  const kept = steps.filter((step) => step.kept).map((step) => `(SELECT count(*) FROM ${step.name})`)
  return sql`WITH ${sql.join(", ", false)(steps.map((step) => sql`${sql.literal(step.name)} AS (${step.sql(sql, values)})`))}
    SELECT EXISTS (SELECT 1 FROM pass) AS open, (SELECT tracks_seen FROM pass) AS tracks_seen,
      (SELECT count(*) FROM landed)::int AS written, (${sql.literal(kept.length === 0 ? "0" : kept.join(" + "))})::int AS kept,
      (SELECT held FROM lease) AS held`
}
