import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Clock, Context, Effect, Layer, Metric, Option, Schema } from "effect"
import * as Metrics from "../observability/metrics.js"
import { listConnections } from "../auth/Connections.js"
import { DatabaseConfig } from "../config.js"
import { rowsOrDie } from "../db/rows.js"
import { Checkpoints } from "../sync/pass/Checkpoints.js"
import { fullPassCadence, SyncSettings } from "../sync/SyncSettings.js"
import { nextDueAt } from "./DueSchedule.js"
import { type JobKind, jobKinds, QueueNames } from "./JobKinds.js"
import { JobSettingsConfig } from "./JobSettings.js"
import { queueSchemaOf } from "./JobQueue.js"

/** The jobs of one kind, by state: ready to run, waiting for their start time, running, waiting to be retried, failed. */
export interface KindCounts {
  readonly kind: JobKind
  readonly waiting: number
  readonly deferred: number
  readonly active: number
  readonly retrying: number
  readonly failed: number
}

export interface AccountInQueue {
  readonly accountId: string
  /** The job running for it (kind and since when), if one is. */
  readonly running: { readonly kind: string; readonly since: Date } | null
  /** Who holds its lease: a worker (`... worker host:pid (pid N)`) or a one-shot command. */
  readonly heldBy: string | null
  /** When its next sync is due (its streams' cadences). */
  readonly nextDueAt: Date
}

export interface QueueView {
  readonly schema: string
  readonly kinds: ReadonlyArray<KindCounts>
  /** Jobs that failed every retry and wait in the dead-letter queue. */
  readonly deadLetters: number
  readonly accounts: ReadonlyArray<AccountInQueue>
}

/** What `status` and the workers' gauges say of the queue: a read model over pg-boss's job table, the accounts' leases and the checkpoints. */
export class QueueStatus extends Context.Tag("account-sync/QueueStatus")<
  QueueStatus,
  {
    /** None when no queue was ever set up in this database (no worker ran). */
    readonly read: Effect.Effect<Option.Option<QueueView>, SqlError.SqlError>
    readonly counts: Effect.Effect<Option.Option<ReadonlyArray<KindCounts>>, SqlError.SqlError>
  }
>() {}

const CountRow = Schema.Struct({ kind: Schema.String, state: Schema.String, later: Schema.Boolean, n: Schema.Number })
const ActiveRow = Schema.Struct({ key: Schema.String, kind: Schema.String, started_on: Schema.DateFromSelf })
const HolderRow = Schema.Struct({ account_id: Schema.String, holder: Schema.String })

export const QueueStatusLive = Layer.effect(
  QueueStatus,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const checkpoints = yield* Checkpoints
    const settings = yield* SyncSettings
    const jobSettings = yield* JobSettingsConfig
    const schema = queueSchemaOf(jobSettings, (yield* DatabaseConfig).schema)
    const streams = settings.streams.defaults.map((stream) => ({ stream, fullPassEvery: fullPassCadence(settings, stream) }))
    const decode = <A, I>(s: Schema.Schema<A, I>) => (rows: ReadonlyArray<unknown>) => rowsOrDie(Schema.decodeUnknown(Schema.Array(s))(rows))

    const exists = Effect.map(
      rowsOrDie(
        SqlSchema.single({
          Request: Schema.String,
          Result: Schema.Struct({ t: Schema.NullOr(Schema.String) }),
          execute: (table) => sql`SELECT to_regclass(${table})::text AS t`
        })(`${schema}.job`)
      ),
      (r) => r.t !== null
    )

    const countsNow = Effect.gen(function* () {
      const rows = yield* Effect.flatMap(
        sql`SELECT data->>'kind' AS kind, state::text AS state, start_after > now() AS later, count(*)::int AS n
            FROM ${sql(schema)}.job WHERE name = ${QueueNames.accounts} AND state IN ('created', 'retry', 'active', 'failed')
            GROUP BY 1, 2, 3`,
        decode(CountRow)
      )
      return jobKinds.map((kind): KindCounts => {
        const of = (state: string, later?: boolean) =>
          rows.filter((r) => r.kind === kind && r.state === state && (later === undefined || r.later === later)).reduce((n, r) => n + r.n, 0)
        return { kind, waiting: of("created", false), deferred: of("created", true), active: of("active"), retrying: of("retry"), failed: of("failed") }
      })
    })

    const counts = Effect.flatMap(exists, (yes) => (yes ? Effect.map(countsNow, Option.some) : Effect.succeed(Option.none())))

    const read = Effect.gen(function* () {
      if (!(yield* exists)) return Option.none<QueueView>()
      const kinds = yield* countsNow
      const dead = yield* rowsOrDie(
        SqlSchema.single({
          Request: Schema.Void,
          Result: Schema.Struct({ n: Schema.Number }),
          execute: () => sql`SELECT count(*)::int AS n FROM ${sql(schema)}.job WHERE name = ${QueueNames.deadLetters} AND state IN ('created', 'retry')`
        })(undefined)
      )
      const active = yield* Effect.flatMap(
        sql`SELECT singleton_key AS key, data->>'kind' AS kind, started_on FROM ${sql(schema)}.job WHERE name = ${QueueNames.accounts} AND state = 'active'`,
        decode(ActiveRow)
      )
      // the accounts' leases (AccountLeases) in this schema of this database: a lease in force names its holder
      const holders = yield* Effect.flatMap(
        sql`SELECT account_id, holder FROM account_leases WHERE expires_at > now()`,
        decode(HolderRow)
      )
      const all = yield* checkpoints.all()
      const now = new Date(yield* Clock.currentTimeMillis)
      const accounts = (yield* Effect.provideService(listConnections, SqlClient.SqlClient, sql))
        .filter((c) => c.status === "active")
        .map((c): AccountInQueue => {
          const job = active.find((a) => a.key === c.accountId)
          return {
            accountId: c.accountId,
            running: job ? { kind: job.kind, since: job.started_on } : null,
            heldBy: holders.find((h) => h.account_id === c.accountId)?.holder ?? null,
            nextDueAt: nextDueAt({ streams, checkpoints: all.get(c.accountId), connectedAt: c.connectedAt, incrementalEvery: jobSettings.incrementalEvery, now })
          }
        })
        .sort((a, b) => a.nextDueAt.getTime() - b.nextDueAt.getTime())
      return Option.some<QueueView>({ schema, kinds, deadLetters: dead.n, accounts })
    })

    return QueueStatus.of({ read, counts })
  })
)

/** Sets the queue-depth gauges (account_sync_queue_jobs by kind and state) from the job table. */
export const publishQueueDepth = Effect.gen(function* () {
  const counts = yield* (yield* QueueStatus).counts
  if (Option.isNone(counts)) return
  for (const k of counts.value) {
    for (const [state, n] of [["waiting", k.waiting], ["deferred", k.deferred], ["active", k.active], ["retrying", k.retrying], ["failed", k.failed]] as const) {
      yield* Metric.set(Metric.tagged(Metric.tagged(Metrics.queueJobs, "kind", k.kind), "state", state), n)
    }
  }
})
