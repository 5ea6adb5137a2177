import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { rowsOrDie } from "../db/rows.js"
import type { AnyStream } from "../sync/streams/Stream.js"
import { shownError, shownOutcome } from "../run/Runs.js"
import { fullPassCadence, SyncSettings } from "../sync/SyncSettings.js"

/** The latest run of a stream of an account. */
export interface StreamRunStatus {
  readonly kind: string
  readonly outcome: string
  readonly startedAt: Date
  readonly finishedAt: Date | null
  readonly rows: number
  readonly rowsWritten: number
  readonly rowsDeleted: number
  readonly costPoints: number
  readonly overheadPoints: number
  readonly error: string | null
}

/** Where one stream of one account stands. */
export interface StreamState {
  readonly accountId: string
  readonly stream: string
  /** A pass in progress (a killed backfill resumes it): its kind and the rows of its order landed. */
  readonly inProgress: { readonly kind: string; readonly position: number; readonly startedAt: Date | null } | null
  readonly lastFullPassAt: Date | null
  /** When `sync` next runs a full pass of it (the last one's start plus the stream's cadence). */
  readonly nextFullPassAt: Date | null
  /** A change event named a record only a full pass can bring: the next `sync` runs one. */
  readonly fullPassRequested: boolean
  /** The newest update time landed (service time): an incremental pass reads from here minus the overlap. */
  readonly highWaterMark: Date | null
  /** Why the last full pass marked nothing deleted (its listing was incomplete); null when it checked deletions. */
  readonly deletionsUnchecked: string | null
  /** Rows the service counted but did not list (it withholds them from the app), by the last full pass's listing. */
  readonly rowsWithheld: number | null
  readonly lastRun: StreamRunStatus | null
}

/** An account's most recent run of any stream (`status`: the connection's last run). */
export interface AccountLastRun {
  readonly stream: string
  readonly kind: string
  readonly outcome: string
  readonly startedAt: Date
  readonly finishedAt: Date | null
}

/** Each account's most recent run, from its streams' states. */
export const lastRunsByAccount = (states: ReadonlyArray<StreamState>): ReadonlyMap<string, AccountLastRun> => {
  const out = new Map<string, AccountLastRun>()
  for (const s of states) {
    if (s.lastRun === null) continue
    const seen = out.get(s.accountId)
    if (seen === undefined || s.lastRun.startedAt > seen.startedAt) {
      out.set(s.accountId, { stream: s.stream, kind: s.lastRun.kind, outcome: s.lastRun.outcome, startedAt: s.lastRun.startedAt, finishedAt: s.lastRun.finishedAt })
    }
  }
  return out
}

const Row = Schema.Struct({
  account_id: Schema.String,
  stream: Schema.String,
  pass_kind: Schema.NullOr(Schema.String),
  position: Schema.NullOr(Schema.Number),
  pass_started_at: Schema.NullOr(Schema.DateFromSelf),
  last_full_pass_at: Schema.NullOr(Schema.DateFromSelf),
  high_water_mark: Schema.NullOr(Schema.DateFromSelf),
  full_pass_requested_at: Schema.NullOr(Schema.DateFromSelf),
  deletions_unchecked: Schema.NullOr(Schema.String),
  rows_withheld: Schema.NullOr(Schema.Number),
  kind: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String),
  started_at: Schema.NullOr(Schema.DateFromSelf),
  finished_at: Schema.NullOr(Schema.DateFromSelf),
  rows: Schema.NullOr(Schema.Number),
  rows_written: Schema.NullOr(Schema.Number),
  rows_deleted: Schema.NullOr(Schema.Number),
  cost_points: Schema.NullOr(Schema.NumberFromString),
  overhead_points: Schema.NullOr(Schema.NumberFromString),
  error: Schema.NullOr(Schema.String)
})

/**
 * Every stream of every connected account: its checkpoint and its latest run that ran (`status`). A run skipped because
 * another process held the account says nothing of the stream: the run before it is shown. A `running` run whose
 * process is gone is shown interrupted (Runs' `shownOutcome`).
 */
export class StreamStatus extends Context.Tag("account-sync/StreamStatus")<
  StreamStatus,
  { readonly list: (streams: ReadonlyArray<AnyStream>) => Effect.Effect<ReadonlyArray<StreamState>, SqlError.SqlError> }
>() {}

export const StreamStatusLive = Layer.effect(
  StreamStatus,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* SyncSettings
    const rows = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Row,
      execute: (names) => sql`
        SELECT c.account_id, s.stream, k.pass_kind, k.position, k.pass_started_at, k.last_full_pass_at, k.high_water_mark, k.full_pass_requested_at,
          k.deletions_unchecked, k.rows_withheld, r.kind, ${shownOutcome(sql)} AS outcome, r.started_at, r.finished_at, r.rows, r.rows_written, r.rows_deleted,
          r.cost_points::text AS cost_points, r.overhead_points::text AS overhead_points, ${shownError(sql)} AS error
        FROM connections c
        CROSS JOIN jsonb_array_elements_text(${JSON.stringify(names)}::jsonb) WITH ORDINALITY AS s(stream, ord)
        LEFT JOIN sync_checkpoints k ON k.account_id = c.account_id AND k.stream = s.stream
        LEFT JOIN LATERAL (
          SELECT * FROM sync_runs WHERE account_id = c.account_id AND stream = s.stream AND outcome <> 'skipped' ORDER BY started_at DESC, id DESC LIMIT 1
        ) r ON true
        ORDER BY c.account_id, s.ord`
    })
    const list = (streams: ReadonlyArray<AnyStream>) =>
      Effect.map(rowsOrDie(rows(streams.map((s) => s.name))), (found) =>
        found.map((r): StreamState => {
          const stream = streams.find((s) => s.name === r.stream)!
          return {
            accountId: r.account_id,
            stream: r.stream,
            inProgress: r.pass_kind === null ? null : { kind: r.pass_kind, position: r.position ?? 0, startedAt: r.pass_started_at },
            lastFullPassAt: r.last_full_pass_at,
            nextFullPassAt: r.last_full_pass_at === null ? null : new Date(r.last_full_pass_at.getTime() + Duration.toMillis(fullPassCadence(settings, stream))),
            highWaterMark: r.high_water_mark,
            deletionsUnchecked: r.deletions_unchecked,
            rowsWithheld: r.rows_withheld,
            fullPassRequested: r.full_pass_requested_at !== null && (r.last_full_pass_at === null || r.full_pass_requested_at > r.last_full_pass_at),
            lastRun:
              r.kind === null || r.outcome === null || r.started_at === null
                ? null
                : {
                    kind: r.kind,
                    outcome: r.outcome,
                    startedAt: r.started_at,
                    finishedAt: r.finished_at,
                    rows: r.rows ?? 0,
                    rowsWritten: r.rows_written ?? 0,
                    rowsDeleted: r.rows_deleted ?? 0,
                    costPoints: r.cost_points ?? 0,
                    overheadPoints: r.overhead_points ?? 0,
                    error: r.error
                  }
          }
        })
      )
    return StreamStatus.of({ list })
  })
)
