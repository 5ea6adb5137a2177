import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { ApiVersionLog, type ApiVersionState } from "../api/ApiVersionLog.js"
import { type Connection, listConnections } from "../auth/Connections.js"
import { GraphqlVersionConfig } from "../config.js"
import { AccountHealth } from "../run/AccountHealth.js"
import { Checkpoints } from "../sync/pass/Checkpoints.js"
import { EventQueue } from "../changes/EventQueue.js"
import { currentCadence, staleAfter, SyncSettings } from "../sync/SyncSettings.js"

/** One stream of an active account: when its data was last known current, and when that counts as stale. */
export interface StreamFreshness {
  readonly accountId: string
  readonly stream: string
  /** Null when no pass finished and no event was applied yet. */
  readonly currentAt: Date | null
  /** Since it was last known current (since the connection, when never). */
  readonly ageMs: number
  readonly cadenceMs: number
  readonly staleAfterMs: number
  readonly stale: boolean
}

/** An account as alerts see it: its connection, and its runs' failures in a row. */
export interface AccountCondition {
  readonly connection: Connection
  readonly failuresInARow: number
  readonly lastError: string | null
}

/** What answered the pinned API version (none while no answer was recorded). */
export interface ApiVersionCondition {
  readonly pinned: string
  readonly state: Option.Option<ApiVersionState>
}

/** The installation's health at one time: the read model metrics, alerts and `status` share. */
export interface HealthSnapshot {
  readonly at: Date
  readonly accounts: ReadonlyArray<AccountCondition>
  readonly streams: ReadonlyArray<StreamFreshness>
  /** Per account with change events waiting: how many, and since when the oldest waits. */
  readonly events: ReadonlyArray<{ readonly accountId: string; readonly waiting: number; readonly oldestWaitingSince: Date | null }>
  readonly apiVersion: ApiVersionCondition
}

/** Reads the whole picture (a few small queries); never writes. */
export class Health extends Context.Tag("account-sync/Health")<Health, { readonly snapshot: Effect.Effect<HealthSnapshot, SqlError.SqlError> }>() {}

export const HealthLive = Layer.effect(
  Health,
  Effect.gen(function* () {
    // read with the database alone, like the rest of `status`: no service settings, no token key
    const sql = yield* SqlClient.SqlClient
    const health = yield* AccountHealth
    const checkpoints = yield* Checkpoints
    const queue = yield* EventQueue
    const versions = yield* ApiVersionLog
    const graphqlVersion = yield* GraphqlVersionConfig
    const settings = yield* SyncSettings

    const snapshot = Effect.gen(function* () {
      const at = new Date(yield* Clock.currentTimeMillis)
      const [all, runs, current, events, state] = yield* Effect.all([
        Effect.provideService(listConnections, SqlClient.SqlClient, sql),
        health.list(),
        checkpoints.currentAsOf(),
        queue.status(),
        versions.read(graphqlVersion)
      ])
      const healthOf = new Map(runs.map((r) => [r.accountId, r]))
      const accounts = all.map((connection) => {
        const h = healthOf.get(connection.accountId)
        return { connection, failuresInARow: h?.failuresInARow ?? 0, lastError: h?.lastError ?? null }
      })
      // by account and stream: a thousand accounts of nine streams each, not a scan per stream
      const currentOf = new Map(current.map((k) => [`${k.accountId}\u0000${k.stream}`, k.at]))
      const streams = all
        .filter((c) => c.status === "active")
        .flatMap((c) =>
          settings.streams.defaults.map((stream): StreamFreshness => {
            const currentAt = currentOf.get(`${c.accountId}\u0000${stream.name}`) ?? null
            const ageMs = Math.max(0, at.getTime() - (currentAt ?? c.connectedAt).getTime())
            const staleAfterMs = Duration.toMillis(staleAfter(settings, stream))
            return {
              accountId: c.accountId,
              stream: stream.name,
              currentAt,
              ageMs,
              cadenceMs: Duration.toMillis(currentCadence(settings, stream)),
              staleAfterMs,
              stale: ageMs > staleAfterMs
            }
          })
        )
      return {
        at,
        accounts,
        streams,
        events: events.filter((e) => e.waiting > 0).map((e) => ({ accountId: e.accountId, waiting: e.waiting, oldestWaitingSince: e.oldestWaitingSince })),
        apiVersion: { pinned: graphqlVersion, state }
      } satisfies HealthSnapshot
    })
    return Health.of({ snapshot })
  })
)
