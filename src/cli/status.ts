import { Command, Options } from "@effect/cli"
import { Clock, Console, Effect, Layer, Option } from "effect"
import { ApiVersionLogLive } from "../api/ApiVersionLog.js"
import { GraphqlVersionConfig } from "../config.js"
import { AccountHealthLive } from "../run/AccountHealth.js"
import { CheckpointsLive } from "../sync/pass/Checkpoints.js"
import { Health, HealthLive } from "../health/Health.js"
import { DatabaseLayer, settingsFirst } from "./app.js"
import { count, safe, wrap } from "./output/text.js"
import { withHelp } from "./help.js"
import { terminalScreenLines, terminalTableWidth } from "./table.js"
import { checkStreams, resolveAccounts } from "./accountSelection.js"
import { ExitWith } from "./ExitCode.js"
import { fleetAccountJson, fleetLines, runJson, runsTable, summaryJson, summaryLine } from "./statusFleet.js"
import { connectionJson, connectionsTable } from "./statusConnections.js"
import { eventsJson, eventsTable, unmatchedLines } from "./statusEvents.js"
import { apiVersionJson, apiVersionLines, staleLines } from "./statusHealth.js"
import { queueJson, queueTables } from "./statusQueue.js"
import { deletionLines, streamJson, streamsTable } from "./statusStreams.js"
import { iso, type StatusView, textWidth } from "./statusView.js"
import { fleetAccounts, type FleetFilter } from "../health/FleetView.js"
import { RunHistory, RunHistoryLive } from "../health/RunHistory.js"
import { streamNames } from "../sync/streams/index.js"
import { type Connection, listConnections } from "../auth/Connections.js"
import { EventQueue, EventQueueLive } from "../changes/EventQueue.js"
import { lastRunsByAccount, StreamStatus, StreamStatusLive } from "../health/StreamStatus.js"
import { SyncSettings, SyncSettingsConfig } from "../sync/SyncSettings.js"
import { QueueStatus, QueueStatusLive } from "../jobs/QueueStatus.js"

/**
 * `status`: where every account and stream stands, or the run history. What it prints is made by the status*.ts
 * modules beside it (exported from here too, for the tests and the demo that print the same).
 */

export { connectionJson, connectionsTable } from "./statusConnections.js"
export { eventsJson, eventsTable, unmatchedLines } from "./statusEvents.js"
export { apiVersionJson, apiVersionLines, staleLines } from "./statusHealth.js"
export { queueJson, queueTables } from "./statusQueue.js"
export { deletionLines, streamJson, streamsTable } from "./statusStreams.js"
export type { StatusView } from "./statusView.js"

const json = Options.boolean("json").pipe(Options.withDescription("Print everything as JSON, with ids and absolute times"))
const wide = Options.boolean("wide").pipe(Options.withDescription("Print ids and every column (points, high-water mark, errors), however wide"))
const failing = Options.boolean("failing").pipe(Options.withDescription("Only accounts with a stream whose latest run failed (with --runs: only failed runs)"))
const stale = Options.boolean("stale").pipe(Options.withDescription("Only accounts with a stream not current within its cadence"))
const accountsOption = Options.text("account").pipe(
  Options.withPseudoName("ID|NAME"),
  Options.withDescription("Only this account, by id or name (repeatable)"),
  Options.repeated
)
const streamsOption = Options.text("stream").pipe(
  Options.withPseudoName("NAME"),
  Options.withDescription(`Only this stream (repeatable): ${streamNames.join(", ")}; accounts are judged by these streams alone`),
  Options.repeated
)
const runsOption = Options.boolean("runs").pipe(Options.withDescription("The run history (sync_runs), newest first, instead of where things stand"))
const allOption = Options.boolean("all").pipe(Options.withDescription("Every account (or run), however many screens it takes"))
const detailOption = Options.boolean("detail").pipe(Options.withDescription("Every stream of every account shown, however many lines (the view of a few accounts)"))

/** What `status` reads: the database alone (no service settings, no token key: it decrypts nothing). */
const StatusLayer = Layer.mergeAll(StreamStatusLive, HealthLive, QueueStatusLive, RunHistoryLive).pipe(
  Layer.provideMerge(Layer.mergeAll(AccountHealthLive, CheckpointsLive, ApiVersionLogLive, EventQueueLive)),
  Layer.provideMerge(SyncSettings.layer),
  Layer.provideMerge(DatabaseLayer),
  Layer.provideMerge(settingsFirst(SyncSettingsConfig, GraphqlVersionConfig))
)

/** Lines a view of `accounts` with every stream takes: a connection line, a caption and the streams each, the rest. */
const detailedLines = (accounts: number, streams: number) => accounts * (streams + 2) + 8

const statusArgs = { json, wide, failing, stale, accounts: accountsOption, streams: streamsOption, runs: runsOption, all: allOption, detail: detailOption }

export const statusCommand = withHelp(Command.make("status", statusArgs, (args) =>
  Effect.gen(function* () {
    const badStream = checkStreams("--stream", args.streams, streamNames)
    if (badStream !== undefined) return yield* badStream
    const all = yield* listConnections
    const resolved = resolveAccounts("--account", args.accounts, all)
    if (resolved instanceof ExitWith) return yield* resolved
    const settings = yield* SyncSettings
    const now = yield* Clock.currentTimeMillis
    const view: StatusView = { now, wide: args.wide, maxWidth: terminalTableWidth(), lineWidth: process.stdout.isTTY ? terminalTableWidth() : Number.POSITIVE_INFINITY }
    const screen = terminalScreenLines()
    const states = yield* (yield* StreamStatus).list(settings.streams.catalog)
    const health = yield* (yield* Health).snapshot
    const filter: FleetFilter = { accounts: resolved, streams: args.streams, failing: args.failing, stale: args.stale }
    // the summary counts the whole fleet (over the streams asked for); the filters choose what is listed
    const fleet = fleetAccounts(all, states, health.streams, { ...filter, accounts: [], failing: false, stale: false })
    const shown = fleetAccounts(all, states, health.streams, filter)
    const filtered = resolved.length > 0 || args.failing || args.stale
    if (args.runs) {
      // --failing picks failed runs (of any account, recovered or not); --account and --stale pick accounts
      const accountIds = resolved.length > 0 || args.stale ? fleetAccounts(all, states, health.streams, { ...filter, failing: false }).map((a) => a.connection.accountId) : undefined
      return yield* printRuns(args, accountIds, all, view, screen)
    }

    const ids = new Set(shown.map((a) => a.connection.accountId))
    const connections = all.filter((c) => ids.has(c.accountId))
    const streams = states.filter((s) => ids.has(s.accountId) && (args.streams.length === 0 || args.streams.includes(s.stream)))
    const lastRuns = lastRunsByAccount(streams)
    const queue = yield* EventQueue
    const events = (yield* queue.status()).filter((e) => ids.has(e.accountId))
    const unmatched = yield* queue.unmatched()
    const jobs = Option.getOrUndefined(yield* (yield* QueueStatus).read)
    const freshness = health.streams.filter((f) => ids.has(f.accountId) && (args.streams.length === 0 || args.streams.includes(f.stream)))
    if (args.json) {
      const byStream = new Map(freshness.map((f) => [`${f.accountId}\u0000${f.stream}`, f]))
      const freshnessOf = (accountId: string, stream: string) => byStream.get(`${accountId}\u0000${stream}`)
      const connectionsJson = shown.map((a) => {
        const c = a.connection
        return {
          ...connectionJson(c, lastRuns.get(c.accountId)),
          ...fleetAccountJson(a),
          streams: streams
            .filter((s) => s.accountId === c.accountId)
            .map((s) => {
              const f = freshnessOf(c.accountId, s.stream)
              return { ...streamJson(s), dataCurrentAt: iso(f?.currentAt ?? null), stale: f?.stale ?? false }
            }),
          events: eventsJson(events.find((e) => e.accountId === c.accountId))
        }
      })
      const unmatchedEvents = unmatched.map((u) => ({ ...u, lastReceivedAt: u.lastReceivedAt.toISOString() }))
      const queueShown = jobs === undefined ? null : queueJson({ ...jobs, accounts: jobs.accounts.filter((a) => ids.has(a.accountId)) })
      return yield* Console.log(
        JSON.stringify({ summary: summaryJson(fleet, jobs), apiVersion: apiVersionJson(health.apiVersion), connections: connectionsJson, unmatchedEvents, queue: queueShown }, null, 2)
      )
    }

    const summary = summaryLine(fleet, jobs, args.wide ? Number.POSITIVE_INFINITY : view.maxWidth)
    yield* Console.log(summary)
    if (filtered) yield* Console.log(`${count(shown.length)} account${shown.length === 1 ? "" : "s"} match ${filterText(args)}`)
    const api = apiVersionLines(health.apiVersion, args.wide ? Number.POSITIVE_INFINITY : textWidth(view))
    const detailed = args.detail || (!args.all && detailedLines(shown.length, args.streams.length || settings.streams.catalog.length) <= screen)
    if (!detailed) {
      // one line per account, those needing attention first; within the screen unless --all
      const unmatchedLine = unmatched.length > 0 ? [`${count(unmatched.reduce((n, u) => n + u.events, 0))} webhook event(s) for accounts no connection matches (status --json lists them)`] : []
      const fixed = summary.split("\n").length + 1 + (filtered ? 1 : 0) + 1 + 1 + api.split("\n").length + unmatchedLine.length + 1
      yield* Console.log(`\n${fleetLines(shown, args.all ? Number.POSITIVE_INFINITY : Math.max(3, screen - fixed), view)}`)
      if (unmatchedLine.length > 0) yield* Console.log(unmatchedLine[0])
      return yield* Console.log(`\n${api}`)
    }
    yield* Console.log(`\n${connectionsTable(connections, lastRuns, view)}`)
    if (streams.length > 0) yield* Console.log(`\n${streamsTable(streams, connections, view)}`)
    const deletions = deletionLines(streams, connections, view)
    if (deletions !== "") yield* Console.log(`\n${deletions}`)
    if (events.some((e) => e.waiting + e.failed + e.deferred > 0 || e.lastApplied !== null)) yield* Console.log(`\n${eventsTable(events, connections, view)}`)
    if (unmatched.length > 0) yield* Console.log(`\n${unmatchedLines(unmatched)}`)
    const staleText = staleLines(freshness)
      .split("\n")
      .map((line) => (args.wide ? line : wrap(line, textWidth(view), 2)))
      .join("\n")
    if (staleText.length > 0) yield* Console.log(`\n${staleText}`)
    yield* Console.log(`\n${api}`)
    if (jobs !== undefined) yield* Console.log(`\n${queueTables({ ...jobs, accounts: jobs.accounts.filter((a) => ids.has(a.accountId)) }, connections, view)}`)
  }).pipe(Effect.provide(StatusLayer))
), {
  purpose: "Show where every account and stream stands, or the run history; needs only the database.",
  details:
    "It opens with one line: accounts by state (active, backfilling, failing, stale, revoked) and the jobs waiting and dead letters of the queue. A few accounts are shown in full: every connection (status, reason, token expiry, last run), every stream of each (last run, pass in progress, last and next full pass), change events, stale streams, the API version, and with workers the job queue. More than a screen's worth are shown one line each, those needing attention first, within the screen (--all: every one). --failing, --stale, --account and --stream narrow either view; --runs lists the runs of sync_runs instead, newest first. A run whose process stopped (no heartbeat for 90 s) is shown interrupted. Times are relative; --json gives them absolute, with ids.",
  examples: ["account-sync status", "account-sync status --failing", "account-sync status --stale --stream visits", "account-sync status --runs --account 'Maple Leaf'", "account-sync status --json"]
})

/** The filters given, as a person typed them. */
const filterText = (args: { readonly failing: boolean; readonly stale: boolean; readonly accounts: ReadonlyArray<string>; readonly streams: ReadonlyArray<string> }) =>
  [
    ...(args.failing ? ["--failing"] : []),
    ...(args.stale ? ["--stale"] : []),
    ...args.accounts.map((a) => `--account ${safe(a)}`),
    ...args.streams.map((s) => `--stream ${s}`)
  ].join(" ")

/** `status --runs`: the newest runs of the accounts shown, within the screen unless --all. */
const printRuns = (
  args: { readonly json: boolean; readonly all: boolean; readonly failing: boolean; readonly streams: ReadonlyArray<string> },
  accountIds: ReadonlyArray<string> | undefined,
  connections: ReadonlyArray<Connection>,
  view: StatusView,
  screen: number
) =>
  Effect.gen(function* () {
    if (accountIds !== undefined && accountIds.length === 0) return yield* Console.log(args.json ? "[]" : "no account matches")
    const runs = yield* (yield* RunHistory).list({
      accounts: accountIds ?? [],
      streams: args.streams,
      failedOnly: args.failing,
      limit: args.json || args.all ? 100_000 : Math.max(1, screen - 2)
    })
    yield* Console.log(args.json ? JSON.stringify(runs.map((r) => runJson(r, connections)), null, 2) : runsTable(runs, connections, view))
  })
