import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer } from "effect"
import { AuthLayer } from "./app.js"
import { alignedTable } from "./table.js"
import { type Connection, Connections } from "../auth/Connections.js"
import { type StreamState, StreamStatus, StreamStatusLive } from "../sync/StreamStatus.js"
import { SyncSettings } from "../sync/SyncSettings.js"

/** One connection as `status --json` prints it. */
export const connectionJson = (c: Connection) => ({
  accountId: c.accountId,
  accountName: c.accountName,
  status: c.status,
  reason: c.statusReason,
  scopes: c.scopes,
  connectedAt: c.connectedAt.toISOString(),
  updatedAt: c.updatedAt.toISOString(),
  tokenExpiresAt: c.tokenExpiresAt?.toISOString() ?? null,
  lastRun: c.lastRun
    ? {
        stream: c.lastRun.stream,
        kind: c.lastRun.kind,
        outcome: c.lastRun.outcome,
        startedAt: c.lastRun.startedAt.toISOString(),
        finishedAt: c.lastRun.finishedAt?.toISOString() ?? null
      }
    : null
})

const reasonText = (c: Connection) =>
  c.status === "revoked" ? `${c.statusReason ?? "revoked"}; reconnect with \`account-sync connect\`` : (c.statusReason ?? "")

/** A plain-text table: id, name, status, reason, token expiry, last run. */
export const connectionsTable = (connections: ReadonlyArray<Connection>): string => {
  if (connections.length === 0) return "no connected accounts (connect one with `account-sync connect`)"
  const header = ["ACCOUNT", "NAME", "STATUS", "REASON", "TOKEN EXPIRES", "LAST RUN"]
  const rows = connections.map((c) => [
    c.accountId,
    c.accountName,
    c.status,
    reasonText(c),
    c.tokenExpiresAt?.toISOString() ?? "-",
    c.lastRun ? `${c.lastRun.startedAt.toISOString()} ${c.lastRun.stream} ${c.lastRun.outcome}` : "never"
  ])
  return alignedTable([header, ...rows])
}

const iso = (d: Date | null) => d?.toISOString() ?? null

/** One stream of an account as `status --json` prints it. */
export const streamJson = (s: StreamState) => ({
  stream: s.stream,
  inProgress: s.inProgress ? { ...s.inProgress, startedAt: iso(s.inProgress.startedAt) } : null,
  lastFullPassAt: iso(s.lastFullPassAt),
  nextFullPassAt: iso(s.nextFullPassAt),
  highWaterMark: iso(s.highWaterMark),
  lastRun: s.lastRun ? { ...s.lastRun, startedAt: s.lastRun.startedAt.toISOString(), finishedAt: iso(s.lastRun.finishedAt) } : null
})

/** A plain-text table: every stream of every account, where it stands and how its latest run went. */
export const streamsTable = (states: ReadonlyArray<StreamState>): string => {
  const header = ["ACCOUNT", "STREAM", "LAST RUN", "ROWS", "WRITTEN", "DELETED", "POINTS", "IN PROGRESS", "LAST FULL PASS", "NEXT FULL PASS", "HIGH-WATER MARK", "ERROR"]
  const rows = states.map((s) => [
    s.accountId,
    s.stream,
    s.lastRun ? `${s.lastRun.startedAt.toISOString()} ${s.lastRun.kind} ${s.lastRun.outcome}` : "never",
    String(s.lastRun?.rows ?? "-"),
    String(s.lastRun?.rowsWritten ?? "-"),
    String(s.lastRun?.rowsDeleted ?? "-"),
    String(s.lastRun?.costPoints ?? "-"),
    s.inProgress ? `${s.inProgress.kind} pass at row ${s.inProgress.position}` : "-",
    iso(s.lastFullPassAt) ?? "never",
    iso(s.nextFullPassAt) ?? "now",
    iso(s.highWaterMark) ?? "-",
    s.lastRun?.error ?? ""
  ])
  return alignedTable([header, ...rows])
}

const json = Options.boolean("json").pipe(Options.withDescription("Print the connections as JSON"))

export const statusCommand = Command.make("status", { json }, ({ json }) =>
  Effect.gen(function* () {
    const all = yield* (yield* Connections).list()
    const settings = yield* SyncSettings
    const streams = yield* (yield* StreamStatus).list(settings.streams.catalog)
    if (json) {
      const out = all.map((c) => ({ ...connectionJson(c), streams: streams.filter((s) => s.accountId === c.accountId).map(streamJson) }))
      return yield* Console.log(JSON.stringify(out, null, 2))
    }
    yield* Console.log(connectionsTable(all))
    if (streams.length > 0) yield* Console.log(`\n${streamsTable(streams)}`)
  }).pipe(Effect.provide(StreamStatusLive.pipe(Layer.provideMerge(SyncSettings.layer), Layer.provideMerge(AuthLayer))))
).pipe(Command.withDescription("Show every connection (status, reason, token expiry, last run) and every stream of each: last run, pass in progress, full passes, high-water mark."))
