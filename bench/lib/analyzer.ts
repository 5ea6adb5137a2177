import { SqlClient } from "@effect/sql"
import { type Duration, Effect } from "effect"

/**
 * Stand-in for autovacuum's auto-analyze, which is OFF on this machine's Postgres: without statistics the
 * Warehouse's end-of-pass sweep (`NOT EXISTS` over sync_pass_seen) is planned as a nested loop and a 200,000-row
 * pass never finishes (quadratic). Forked for the life of the scope; see the closing note of issue 6.
 */
export const analyzeWhileRunning = (schema: string, every: Duration.DurationInput = "5 seconds") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.forkScoped(
      Effect.sleep(every).pipe(
        Effect.zipRight(sql.unsafe(`ANALYZE ${schema}.jobs, ${schema}.sync_pass_seen`).pipe(Effect.ignore)),
        Effect.forever
      )
    )
  })
