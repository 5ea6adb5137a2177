import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer } from "effect"
import { AuthLayer } from "./app.js"
import { alignedTable } from "./table.js"
import { type Connection, Connections } from "../auth/Connections.js"
import { type AccountEvents, EventQueue, EventQueueLive, type UnmatchedAccount } from "../sync/events/EventQueue.js"
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
  fullPassRequested: s.fullPassRequested,
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
    s.fullPassRequested ? "now (asked by a change event)" : (iso(s.nextFullPassAt) ?? "now"),
    iso(s.highWaterMark) ?? "-",
    s.lastRun?.error ?? ""
  ])
  return alignedTable([header, ...rows])
}

/** An account's change events as `status --json` prints them. */
export const eventsJson = (e: AccountEvents | undefined) =>
  e === undefined
    ? null
    : {
        waiting: e.waiting,
        oldestWaitingSince: iso(e.oldestWaitingSince),
        lastApplied: e.lastApplied ? { ...e.lastApplied, appliedAt: e.lastApplied.appliedAt.toISOString() } : null,
        failed: e.failed,
        deferred: e.deferred,
        lastError: e.lastError
      }

/** A plain-text table: each account's change events (waiting, last applied, failed). */
export const eventsTable = (events: ReadonlyArray<AccountEvents>): string =>
  alignedTable([
    ["ACCOUNT", "EVENTS WAITING", "OLDEST WAITING", "LAST APPLIED", "FAILED", "DEFERRED", "LAST ERROR"],
    ...events.map((e) => [
      e.accountId,
      String(e.waiting),
      iso(e.oldestWaitingSince) ?? "-",
      e.lastApplied ? `${e.lastApplied.appliedAt.toISOString()} ${e.lastApplied.topic} ${e.lastApplied.itemId}` : "never",
      String(e.failed),
      String(e.deferred),
      e.lastError ?? ""
    ])
  ])

/** Deliveries for account ids no connection matches: recorded and shown, never refused to the service. */
export const unmatchedLines = (unmatched: ReadonlyArray<UnmatchedAccount>): string =>
  unmatched
    .map((u) => `${u.events} webhook event(s) for account ${u.sentAccountId}, which matches no connection (last ${u.lastReceivedAt.toISOString()})`)
    .join("\n")

const json = Options.boolean("json").pipe(Options.withDescription("Print the connections as JSON"))

export const statusCommand = Command.make("status", { json }, ({ json }) =>
  Effect.gen(function* () {
    const all = yield* (yield* Connections).list()
    const settings = yield* SyncSettings
    const streams = yield* (yield* StreamStatus).list(settings.streams.catalog)
    const queue = yield* EventQueue
    const events = yield* queue.status()
    const unmatched = yield* queue.unmatched()
    if (json) {
      const connections = all.map((c) => ({
        ...connectionJson(c),
        streams: streams.filter((s) => s.accountId === c.accountId).map(streamJson),
        events: eventsJson(events.find((e) => e.accountId === c.accountId))
      }))
      const unmatchedEvents = unmatched.map((u) => ({ ...u, lastReceivedAt: u.lastReceivedAt.toISOString() }))
      return yield* Console.log(JSON.stringify({ connections, unmatchedEvents }, null, 2))
    }
    yield* Console.log(connectionsTable(all))
    if (streams.length > 0) yield* Console.log(`\n${streamsTable(streams)}`)
    if (events.some((e) => e.waiting + e.failed + e.deferred > 0 || e.lastApplied !== null)) yield* Console.log(`\n${eventsTable(events)}`)
    if (unmatched.length > 0) yield* Console.log(`\n${unmatchedLines(unmatched)}`)
  }).pipe(Effect.provide(Layer.mergeAll(StreamStatusLive, EventQueueLive).pipe(Layer.provideMerge(SyncSettings.layer), Layer.provideMerge(AuthLayer))))
).pipe(Command.withDescription("Show every connection (status, reason, token expiry, last run), every stream of each (last run, pass in progress, full passes, high-water mark), their change events (waiting, last applied, failed) and events for accounts no connection matches."))
