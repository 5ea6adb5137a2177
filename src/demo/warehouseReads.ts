import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { rowsOrDie } from "../db/rows.js"
import type { AnyStream } from "../sync/streams/Stream.js"

/** What the demo reads back from the warehouse to show what landed. */

const LandedJob = Schema.Struct({ id: Schema.String, title: Schema.NullOr(Schema.String), updated_at: Schema.NullOr(Schema.DateFromSelf) })

/** The live jobs of `ids` as they landed: their title and update time. */
export const landedJobs = (accountId: string, ids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    rowsOrDie(
      SqlSchema.findAll({
        Request: Schema.Array(Schema.String),
        Result: LandedJob,
        execute: (jobIds) => sql`
          SELECT id, title, updated_at FROM jobs WHERE account_id = ${accountId} AND deleted_at IS NULL AND id IN ${sql.in(jobIds)}`
      })(ids)
    )
  )

/** How many versions the history keeps of jobs and of invoices. */
export const versionCounts = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  rowsOrDie(
    SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ jobs: Schema.Number, invoices: Schema.Number }),
      execute: () => sql`SELECT (SELECT count(*)::int FROM jobs_history) AS jobs, (SELECT count(*)::int FROM invoices_history) AS invoices`
    })(undefined)
  )
)

/** The versions of the job of `ids` with the most of them, oldest first: times to the minute (UTC), whole. */
export const versionsOfMostEditedJob = (accountId: string, ids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Record<string, unknown>>`
        SELECT job_number AS job, title,
          to_char(valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS valid_from,
          coalesce(to_char(valid_to AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), '') AS valid_to, coalesce(ended_by, '') AS ended_by
        FROM jobs_history
        WHERE account_id = ${accountId} AND id = (
          SELECT id FROM jobs_history WHERE account_id = ${accountId} AND id IN ${sql.in(ids)}
          GROUP BY id ORDER BY count(*) DESC, id LIMIT 1)
        ORDER BY valid_from`
  )

const Count = Schema.Struct({ n: Schema.Number })

/** A stream's rows, live and marked deleted, and the live rows of each of its line item tables. */
export const streamRowCounts = (stream: AnyStream) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* rowsOrDie(
      SqlSchema.single({
        Request: Schema.Void,
        Result: Schema.Struct({ live: Schema.Number, deleted: Schema.Number }),
        execute: () => sql`
          SELECT count(*) FILTER (WHERE deleted_at IS NULL)::int AS live, count(*) FILTER (WHERE deleted_at IS NOT NULL)::int AS deleted FROM ${sql(stream.table)}`
      })(undefined)
    )
    const children = yield* Effect.forEach(stream.children, (c) =>
      Effect.map(
        rowsOrDie(SqlSchema.single({ Request: Schema.Void, Result: Count, execute: () => sql`SELECT count(*)::int AS n FROM ${sql(c.table)} WHERE deleted_at IS NULL` })(undefined)),
        (r) => ({ table: c.table, live: r.n })
      )
    )
    return { ...rows, children }
  })
