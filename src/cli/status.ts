import { Command, Options } from "@effect/cli"
import { Clock, Console, Duration, Effect, Layer, Option } from "effect"
import { ApiVersionLogLive } from "../api/ApiVersionLog.js"
import { GraphqlVersionConfig } from "../config.js"
import { printable } from "../observability/printable.js"
import { AccountHealthLive } from "../sync/AccountHealth.js"
import { CheckpointsLive } from "../sync/Checkpoints.js"
import { type ApiVersionCondition, Health, HealthLive, type StreamFreshness } from "../sync/Health.js"
import { DatabaseLayer, settingsFirst } from "./app.js"
import { count, displayWidth, safe, wrap } from "./output/text.js"
import { relativeTime } from "./output/time.js"
import { withHelp } from "./help.js"
import { namesAreUnique } from "./summary.js"
import { alignedTable, type TableRow, terminalScreenLines, terminalTableWidth } from "./table.js"
import { checkStreams, resolveAccounts } from "./accountSelection.js"
import { ExitWith } from "./ExitCode.js"
import { fleetAccountJson, fleetLines, runJson, runsTable, summaryJson, summaryLine } from "./statusFleet.js"
import { fleetAccounts, type FleetFilter } from "../sync/FleetView.js"
import { RunHistory, RunHistoryLive } from "../sync/RunHistory.js"
import { streamNames } from "../sync/streams/index.js"
import { type Connection, listConnections } from "../auth/Connections.js"
import { type AccountEvents, EventQueue, EventQueueLive, type UnmatchedAccount } from "../events/EventQueue.js"
import { type AccountLastRun, lastRunsByAccount, type StreamState, StreamStatus, StreamStatusLive } from "../sync/StreamStatus.js"
import { SyncSettings, SyncSettingsConfig } from "../sync/SyncSettings.js"
import { QueueStatus, QueueStatusLive, type QueueView } from "../sync/jobs/QueueStatus.js"

/** One connection as `status --json` prints it, with its latest run of any stream. */
export const connectionJson = (c: Connection, lastRun: AccountLastRun | undefined) => ({
  accountId: c.accountId,
  accountName: c.accountName,
  status: c.status,
  reason: c.statusReason,
  scopes: c.scopes,
  connectedAt: c.connectedAt.toISOString(),
  updatedAt: c.updatedAt.toISOString(),
  tokenExpiresAt: c.tokenExpiresAt?.toISOString() ?? null,
  lastRun: lastRun
    ? {
        stream: lastRun.stream,
        kind: lastRun.kind,
        outcome: lastRun.outcome,
        startedAt: lastRun.startedAt.toISOString(),
        finishedAt: lastRun.finishedAt?.toISOString() ?? null
      }
    : null
})

const reasonText = (c: Connection) =>
  c.status === "revoked" ? `${c.statusReason ?? "revoked"}; reconnect with \`account-sync connect\`` : (c.statusReason ?? "")

/** How `status` prints its tables: relative times against `now`, within `maxWidth` unless `wide`. */
export interface StatusView {
  readonly now: number
  readonly wide: boolean
  readonly maxWidth: number
  /** Where lines of free text (reasons, errors, the API version's warning) wrap: on a terminal its width; piped, never (a pipe gets them whole). */
  readonly lineWidth?: number
}

const textWidth = (view: StatusView) => view.lineWidth ?? view.maxWidth

/** What names an account in a table: its name when every name is its own (and not `wide`), else name and id. */
const accountLabel = (connections: ReadonlyArray<Connection>, wide: boolean) => {
  const byName = namesAreUnique(connections.map((c) => c.accountName))
  const names = new Map(connections.map((c) => [c.accountId, c.accountName]))
  return (accountId: string) => {
    const name = names.get(accountId)
    return name === undefined ? accountId : byName || wide ? name : `${name} (${accountId})`
  }
}

/** Within the view's width (unless wide): `shrink` columns cut, then `optional` ones left out, in that order. */
const fit = (view: StatusView, header: ReadonlyArray<string>, columns: { readonly shrink: ReadonlyArray<string>; readonly optional?: ReadonlyArray<string>; readonly right?: ReadonlyArray<string> }) => {
  const at = (names: ReadonlyArray<string> | undefined) => (names ?? []).map((n) => header.indexOf(n)).filter((i) => i >= 0)
  return view.wide ? { right: at(columns.right) } : { maxWidth: view.maxWidth, shrink: at(columns.shrink), optional: at(columns.optional), right: at(columns.right) }
}

/**
 * A plain-text table: name, status, reason, token expiry, last run of any stream (ids with `wide`). When the reasons
 * do not fit whole beside the rest, they are lines of their own below the table, wrapped, never cut.
 */
export const connectionsTable = (connections: ReadonlyArray<Connection>, lastRuns: ReadonlyMap<string, AccountLastRun>, view: StatusView): string => {
  if (connections.length === 0) return "no connected accounts (connect one with `account-sync connect`)"
  const label = accountLabel(connections, view.wide)
  const table = (withReason: boolean, fitted: boolean) => {
    const header = [...(view.wide ? ["ACCOUNT ID"] : []), "ACCOUNT", "STATUS", ...(withReason ? ["REASON"] : []), "TOKEN EXPIRES", "LAST RUN"]
    const rows = connections.map((c) => {
      const lastRun = lastRuns.get(c.accountId)
      return [
        ...(view.wide ? [c.accountId] : []),
        label(c.accountId),
        c.status,
        ...(withReason ? [reasonText(c)] : []),
        c.tokenExpiresAt ? relativeTime(c.tokenExpiresAt, view.now) : "-",
        // the time first: where the column is cut, the stream and outcome go before it
        lastRun ? `${relativeTime(lastRun.startedAt, view.now)}: ${lastRun.stream} ${lastRun.outcome}` : "never"
      ]
    })
    const at = (names: ReadonlyArray<string>) => names.map((n) => header.indexOf(n)).filter((i) => i >= 0)
    // a token's expiry can wait; the last run's time is never cut before the name is
    return alignedTable([header, ...rows], fitted ? { maxWidth: view.maxWidth, leaveOutFirst: at(["TOKEN EXPIRES"]), shrink: at(["ACCOUNT"]), optional: at(["LAST RUN"]) } : {})
  }
  const whole = table(true, false)
  if (view.wide || whole.split("\n").every((line) => displayWidth(line) <= view.maxWidth)) return whole
  const reasons = connections
    .filter((c) => reasonText(c) !== "")
    .map((c) => `  ${wrap(safe(`${label(c.accountId)}: ${c.status}: ${reasonText(c)}`), textWidth(view), 4)}`)
  return reasons.length === 0 ? table(false, true) : `${table(false, true)}\n\nwhy:\n${reasons.join("\n")}`
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
  deletionsUnchecked: s.deletionsUnchecked,
  rowsWithheld: s.rowsWithheld,
  lastRun: s.lastRun ? { ...s.lastRun, startedAt: s.lastRun.startedAt.toISOString(), finishedAt: iso(s.lastRun.finishedAt) } : null
})

/**
 * A plain-text table: every stream of every account (the account's name on a line above its streams), where it
 * stands and how its latest run went; the errors of the latest runs below it (in a column with `wide`).
 */
export const streamsTable = (states: ReadonlyArray<StreamState>, connections: ReadonlyArray<Connection>, view: StatusView): string => {
  const label = accountLabel(connections, view.wide)
  const rel = (d: Date | null) => (d === null ? null : relativeTime(d, view.now))
  const inactive = new Set(connections.filter((c) => c.status !== "active").map((c) => c.accountId))
  const active = (accountId: string) => !inactive.has(accountId)
  const header = [
    view.wide ? "ACCOUNT / STREAM" : "STREAM",
    "PASS",
    "OUTCOME",
    "STARTED",
    "ROWS",
    "WRITTEN",
    "DELETED",
    ...(view.wide ? ["POINTS"] : []),
    "IN PROGRESS",
    "LAST FULL PASS",
    "NEXT FULL PASS",
    ...(view.wide ? ["HIGH-WATER MARK", "ERROR"] : [])
  ]
  const rows: Array<TableRow> = [header]
  const errors: Array<string> = []
  let account: string | undefined
  for (const s of states) {
    if (s.accountId !== account) {
      account = s.accountId
      rows.push({ caption: view.wide ? `${label(s.accountId)} (${s.accountId})` : label(s.accountId) })
    }
    if (!view.wide && s.lastRun?.error) errors.push(`${label(s.accountId)}: ${s.stream}: ${s.lastRun.error}`)
    rows.push([
      `  ${s.stream}`,
      s.lastRun?.kind ?? "-",
      s.lastRun?.outcome ?? "never run",
      s.lastRun ? relativeTime(s.lastRun.startedAt, view.now) : "-",
      s.lastRun ? count(s.lastRun.rows) : "-",
      s.lastRun ? count(s.lastRun.rowsWritten) : "-",
      s.lastRun ? count(s.lastRun.rowsDeleted) : "-",
      ...(view.wide ? [s.lastRun ? count(s.lastRun.costPoints) : "-"] : []),
      s.inProgress ? `${s.inProgress.kind}, at row ${count(s.inProgress.position)}` : "-",
      rel(s.lastFullPassAt) ?? "never",
      // a connection that is not active gets no pass until it is reconnected
      !active(s.accountId) ? "-" : s.fullPassRequested ? "now (asked by a change event)" : (rel(s.nextFullPassAt) ?? "now"),
      ...(view.wide ? [rel(s.highWaterMark) ?? "-", s.lastRun?.error ?? ""] : [])
    ])
  }
  const table = alignedTable(
    rows,
    fit(view, header, {
      // the time a run started and its outcome are never cut: the columns that can wait go first
      shrink: ["IN PROGRESS"],
      optional: ["LAST FULL PASS", "DELETED", "WRITTEN", "PASS", "IN PROGRESS"],
      right: ["ROWS", "WRITTEN", "DELETED", "POINTS"]
    })
  )
  return errors.length === 0 ? table : `${table}\n\nerrors of the latest runs:\n${errors.map((e) => `  ${wrap(safe(e), textWidth(view), 4)}`).join("\n")}`
}

/** What the streams' last full passes could not say about deletions: one line each, none when all is well. */
export const deletionLines = (states: ReadonlyArray<StreamState>, connections: ReadonlyArray<Connection>, view: StatusView): string => {
  const label = accountLabel(connections, view.wide)
  return states
    .flatMap((s) => {
      const who = `${printable(label(s.accountId))} ${s.stream}`
      return [
        ...(s.deletionsUnchecked === null ? [] : [`${who}: deletions not checked: ${printable(s.deletionsUnchecked)}`]),
        ...(s.rowsWithheld !== null && s.rowsWithheld > 0 ? [`${who}: the service withholds ${s.rowsWithheld} row(s) from this app (counted, not listed)`] : [])
      ]
    })
    .join("\n")
}

/** An account's change events as `status --json` prints them. */
export const eventsJson = (e: AccountEvents | undefined) =>
  e === undefined
    ? null
    : {
        waiting: e.waiting,
        waitingForReconnect: e.waitingForReconnect,
        oldestWaitingSince: iso(e.oldestWaitingSince),
        lastApplied: e.lastApplied ? { ...e.lastApplied, appliedAt: e.lastApplied.appliedAt.toISOString() } : null,
        failed: e.failed,
        deferred: e.deferred,
        lastError: e.lastError
      }

/** A plain-text table: each account's change events (waiting, last applied, failed). */
export const eventsTable = (events: ReadonlyArray<AccountEvents>, connections: ReadonlyArray<Connection>, view: StatusView): string => {
  const label = accountLabel(connections, view.wide)
  const header = [...(view.wide ? ["ACCOUNT ID"] : []), "ACCOUNT", "EVENTS WAITING", "OLDEST WAITING", "LAST APPLIED", "FAILED", "DEFERRED", "LAST ERROR"]
  return alignedTable(
    [
      header,
      ...events.map((e) => [
        ...(view.wide ? [e.accountId] : []),
        label(e.accountId),
        e.waitingForReconnect > 0 ? `${count(e.waiting)} (${count(e.waitingForReconnect)} until reconnected)` : count(e.waiting),
        e.oldestWaitingSince ? relativeTime(e.oldestWaitingSince, view.now) : "-",
        e.lastApplied ? `${e.lastApplied.topic} ${relativeTime(e.lastApplied.appliedAt, view.now)}${view.wide ? ` ${e.lastApplied.itemId}` : ""}` : "never",
        count(e.failed),
        count(e.deferred),
        e.lastError ?? ""
      ])
    ],
    fit(view, header, {
      shrink: ["ACCOUNT", "LAST ERROR", "LAST APPLIED"],
      optional: ["DEFERRED", "OLDEST WAITING", "LAST ERROR"],
      right: ["EVENTS WAITING", "FAILED", "DEFERRED"]
    })
  )
}

/** Deliveries for account ids no connection matches: recorded and shown, never refused to the service. */
export const unmatchedLines = (unmatched: ReadonlyArray<UnmatchedAccount>): string =>
  unmatched
    .map((u) => safe(`${u.events} webhook event(s) for account ${u.sentAccountId}, which matches no connection (last ${u.lastReceivedAt.toISOString()})`))
    .join("\n")

/** The job queue as `status --json` prints it (null when no worker ever set it up). */
export const queueJson = (q: QueueView) => ({
  kinds: q.kinds,
  deadLetters: q.deadLetters,
  accounts: q.accounts.map((a) => ({
    accountId: a.accountId,
    running: a.running ? { kind: a.running.kind, since: a.running.since.toISOString() } : null,
    heldBy: a.heldBy,
    nextDueAt: a.nextDueAt.toISOString()
  }))
})

/** Plain-text tables: jobs per kind and state, then each account's job, the worker session holding it, its next due time. */
export const queueTables = (q: QueueView, connections: ReadonlyArray<Connection>, view: StatusView): string => {
  const label = accountLabel(connections, view.wide)
  const kindsHeader = ["JOBS", "WAITING", "DEFERRED", "ACTIVE", "RETRYING", "FAILED"]
  const accountsHeader = [...(view.wide ? ["ACCOUNT ID"] : []), "ACCOUNT", "RUNNING", "HELD BY", "NEXT DUE"]
  return [
    alignedTable(
      [kindsHeader, ...q.kinds.map((k) => [k.kind, count(k.waiting), count(k.deferred), count(k.active), count(k.retrying), count(k.failed)])],
      fit(view, kindsHeader, { shrink: [], right: kindsHeader.slice(1) })
    ),
    ...(q.deadLetters > 0 ? [`${count(q.deadLetters)} job(s) failed every retry: dead letters in queue account-work-dead (schema ${q.schema})`] : []),
    "",
    alignedTable(
      [
        accountsHeader,
        ...q.accounts.map((a) => [
          ...(view.wide ? [a.accountId] : []),
          label(a.accountId),
          a.running ? `${a.running.kind} since ${relativeTime(a.running.since, view.now)}` : "-",
          a.heldBy ?? "-",
          relativeTime(a.nextDueAt, view.now)
        ])
      ],
      fit(view, accountsHeader, { shrink: ["ACCOUNT", "HELD BY"], optional: ["HELD BY"] })
    )
  ].join("\n")
}

/** The API version section: the pin, and what the service answered to it (a warning, another version). */
export const apiVersionLines = (v: ApiVersionCondition, width = Number.POSITIVE_INFINITY): string => {
  const state = Option.getOrUndefined(v.state)
  if (state === undefined) return wrap(`API version ${v.pinned} (SERVICE_GRAPHQL_VERSION): no answer recorded yet`, width, 2)
  const lines = [`API version ${v.pinned} (SERVICE_GRAPHQL_VERSION): answered by ${printable(state.answered, 40)} since ${state.answeredSince.toISOString()}`]
  if (state.answered !== v.pinned) {
    lines.push(
      `  REPLACED by the service: ${v.pinned} is no longer supported and ${printable(state.answered, 40)} answers instead; runs fail until the pin moves (account-sync schema check, then SERVICE_GRAPHQL_VERSION) or SERVICE_GRAPHQL_VERSION_REPLACED=allow`
    )
  }
  if (state.warning !== null) lines.push(`  the service warns (since ${state.warnedSince?.toISOString() ?? "-"}): ${printable(state.warning)}`)
  // within the width, continued on lines indented under their first
  return lines.map((line) => `${line.startsWith("  ") ? "  " : ""}${wrap(line, width, 4)}`).join("\n")
}

export const apiVersionJson = (v: ApiVersionCondition) =>
  Option.match(v.state, {
    onNone: () => ({ pinned: v.pinned, answered: null, replaced: false, warning: null }),
    onSome: (s) => ({
      pinned: v.pinned,
      answered: s.answered,
      answeredSince: s.answeredSince.toISOString(),
      replaced: s.answered !== v.pinned,
      warning: s.warning,
      warnedSince: iso(s.warnedSince)
    })
  })

/** The stale streams section: one line each (nothing when every stream is current within its cadence). */
export const staleLines = (streams: ReadonlyArray<StreamFreshness>): string =>
  streams
    .filter((f) => f.stale)
    .map(
      (f) =>
        safe(`stale: ${f.accountId} ${f.stream}: last known current ${iso(f.currentAt) ?? "never"}, ${Duration.format(Duration.seconds(Math.round(f.ageMs / 1000)))} ago (stale after ${Duration.format(Duration.millis(f.staleAfterMs))})`)
    )
    .join("\n")

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
