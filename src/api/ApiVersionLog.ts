import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { retryingOnConnectionLoss } from "../db/connectionRetry.js"
import { rowsOrDie } from "../db/rows.js"

/** What the service answered to a version we asked for, as of its latest change. */
export interface ApiVersionState {
  /** The version asked for (SERVICE_GRAPHQL_VERSION when it was sent). */
  readonly requested: string
  /** The version that answered: another one when the requested one is no longer supported. */
  readonly answered: string
  readonly answeredSince: Date
  /** The deprecation warning of the latest answer (the service's text, unescaped), null when it had none. */
  readonly warning: string | null
  readonly warnedSince: Date | null
  readonly observedAt: Date
}

/** One answer's versioning, as the watch records it. */
export interface ApiVersionObservation {
  readonly requested: string
  readonly answered: string
  readonly warning: string | null
}

const Row = Schema.Struct({
  requested: Schema.String,
  answered: Schema.String,
  answered_since: Schema.DateFromSelf,
  warning: Schema.NullOr(Schema.String),
  warned_since: Schema.NullOr(Schema.DateFromSelf),
  observed_at: Schema.DateFromSelf
})

const toState = (r: typeof Row.Type): ApiVersionState => ({
  requested: r.requested,
  answered: r.answered,
  answeredSince: r.answered_since,
  warning: r.warning,
  warnedSince: r.warned_since,
  observedAt: r.observed_at
})

/** The `api_versions` table: what answered each version we asked for (status, metrics and alerts read it). */
export class ApiVersionLog extends Context.Tag("account-sync/ApiVersionLog")<
  ApiVersionLog,
  {
    /** Records an answer that differs from the last one recorded for its requested version (the times say since when). */
    readonly record: (observation: ApiVersionObservation, at: Date) => Effect.Effect<void, SqlError.SqlError>
    readonly read: (requested: string) => Effect.Effect<Option.Option<ApiVersionState>, SqlError.SqlError>
  }
>() {}

export const ApiVersionLogLive = Layer.effect(
  ApiVersionLog,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const find = SqlSchema.findOne({
      Request: Schema.String,
      Result: Row,
      execute: (requested) => sql`SELECT requested, answered, answered_since, warning, warned_since, observed_at FROM api_versions WHERE requested = ${requested}`
    })
    return ApiVersionLog.of(
      retryingOnConnectionLoss({
        record: (o: ApiVersionObservation, at: Date) =>
          Effect.asVoid(sql`
            INSERT INTO api_versions (requested, answered, answered_since, warning, warned_since, observed_at)
            VALUES (${o.requested}, ${o.answered}, ${at}, ${o.warning}, ${o.warning === null ? null : at}, ${at})
            ON CONFLICT (requested) DO UPDATE SET
              answered = EXCLUDED.answered,
              answered_since = CASE WHEN api_versions.answered = EXCLUDED.answered THEN api_versions.answered_since ELSE EXCLUDED.answered_since END,
              warning = EXCLUDED.warning,
              warned_since = CASE WHEN EXCLUDED.warning IS NULL THEN NULL ELSE COALESCE(api_versions.warned_since, EXCLUDED.warned_since) END,
              observed_at = EXCLUDED.observed_at`),
        read: (requested: string) => Effect.map(rowsOrDie(find(requested)), Option.map(toState))
      })
    )
  })
)
