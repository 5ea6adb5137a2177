import type { Connection } from "../auth/Connections.js"
import { accountStates, type AccountState, countByState, type FleetAccount } from "../health/FleetView.js"
import type { PastRun } from "../health/RunHistory.js"
import type { QueueView } from "../jobs/QueueStatus.js"
import { count, cutToWidth, displayWidth } from "./output/text.js"
import { formatDuration, relativeTime } from "./output/time.js"
import { alignedTable } from "./table.js"

/** How `status` prints the fleet: relative times against `now`, within `maxWidth` unless `wide`. */
export interface FleetViewOptions {
  readonly now: number
  readonly wide: boolean
  readonly maxWidth: number
}

/** The jobs the summary line counts: ready to run, and dead letters (none when no worker ever set up the queue). */
export const queueCounts = (queue: QueueView | undefined) =>
  queue === undefined ? undefined : { waiting: queue.kinds.reduce((n, k) => n + k.waiting, 0), deadLetters: queue.deadLetters }

/**
 * The line `status` opens with: accounts by state (disconnected only when some are), jobs waiting and dead letters;
 * continued on a second line, indented, where `maxWidth` is too narrow (broken between two counts, never inside one).
 */
export const summaryLine = (accounts: ReadonlyArray<FleetAccount>, queue: QueueView | undefined, maxWidth = Number.POSITIVE_INFINITY): string => {
  const by = countByState(accounts)
  const states = (["active", "backfilling", "failing", "stale", "revoked"] as const).map((s) => `${count(by[s])} ${s}`)
  if (by.disconnected > 0) states.push(`${count(by.disconnected)} disconnected`)
  const jobs = queueCounts(queue)
  const jobParts = jobs === undefined ? ["no job queue (no worker has run)"] : [`jobs: ${count(jobs.waiting)} waiting,`, `${count(jobs.deadLetters)} dead letters`]
  const parts = [`${count(accounts.length)} account${accounts.length === 1 ? "" : "s"}:`, ...states.map((t, i) => `${t}${i === states.length - 1 ? ";" : ","}`), ...jobParts]
  const lines: Array<string> = []
  for (const part of parts) {
    const last = lines.length - 1
    if (last >= 0 && displayWidth(`${lines[last]} ${part}`) <= maxWidth) lines[last] = `${lines[last]} ${part}`
    else lines.push(last >= 0 ? `  ${part}` : part)
  }
  return lines.join("\n")
}

/** The summary as `status --json` prints it. */
export const summaryJson = (accounts: ReadonlyArray<FleetAccount>, queue: QueueView | undefined) => {
  const jobs = queueCounts(queue)
  return { accounts: accounts.length, byState: countByState(accounts), jobsWaiting: jobs?.waiting ?? null, deadLetters: jobs?.deadLetters ?? null }
}

/** What a person should know of the account first: why it fails, what is stale, how far its backfill is, what runs. */
const detail = (a: FleetAccount, now: number): string => {
  const parts: Array<string> = []
  if (a.connection.status !== "active") parts.push(a.connection.statusReason ?? a.connection.status)
  if (a.failing.length > 0) parts.push(`failed: ${a.failing.map((f) => `${f.stream}${f.error ? ` (${f.error})` : ""}`).join("; ")}`)
  if (a.running !== null) parts.push(`${a.running.stream} ${a.running.kind} running, at row ${count(a.running.position)}`)
  if (a.connection.status === "active" && a.backfilled < a.streams) parts.push(`backfilled ${a.backfilled}/${a.streams} streams`)
  if (a.stale.length > 0) {
    const oldest = a.stale.reduce((o, f) => (f.ageMs > o.ageMs ? f : o))
    parts.push(`stale: ${a.stale.map((f) => f.stream).join(", ")} (${relativeTime(new Date(now - oldest.ageMs), now)})`)
  }
  return parts.join("; ")
}

/** One line per account: its name, state, when its latest run began and what needs attention. */
export const fleetTable = (accounts: ReadonlyArray<FleetAccount>, view: FleetViewOptions): string => {
  const header = [...(view.wide ? ["ACCOUNT ID"] : []), "ACCOUNT", "STATE", "LAST RUN", "DETAIL"]
  const rows = accounts.map((a) => [
    ...(view.wide ? [a.connection.accountId] : []),
    a.connection.accountName,
    a.state,
    a.lastRun ? relativeTime(a.lastRun.startedAt, view.now) : "never",
    detail(a, view.now)
  ])
  const at = (name: string) => header.indexOf(name)
  return alignedTable([header, ...rows], view.wide ? {} : { maxWidth: view.maxWidth, shrink: [at("ACCOUNT"), at("DETAIL"), at("LAST RUN")], optional: [at("DETAIL")] })
}

/**
 * The accounts that fit in `lines` (those needing attention first, as `accounts` is ordered), and one line that says
 * what was left out and how to see it.
 */
export const fleetLines = (accounts: ReadonlyArray<FleetAccount>, lines: number, view: FleetViewOptions): string => {
  if (accounts.length === 0) return "no account matches"
  if (accounts.length <= lines) return fleetTable(accounts, view)
  const shown = accounts.slice(0, Math.max(1, lines - 1))
  const rest = countByState(accounts.slice(shown.length))
  const left = accountStates.filter((s) => rest[s] > 0).map((s: AccountState) => `${count(rest[s])} ${s}`)
  return `${fleetTable(shown, view)}\n${cutToWidth(`… ${count(accounts.length - shown.length)} more: ${left.join(", ")} (--all lists them)`, view.maxWidth)}`
}

/** A fleet account as `status --json` prints it (beside its connection's fields). */
export const fleetAccountJson = (a: FleetAccount) => ({
  state: a.state,
  failingStreams: a.failing.map((f) => f.stream),
  staleStreams: a.stale.map((f) => f.stream),
  streamsBackfilled: a.backfilled
})

/** `status --runs`: one line per run, newest first. */
export const runsTable = (runs: ReadonlyArray<PastRun>, connections: ReadonlyArray<Connection>, view: FleetViewOptions): string => {
  if (runs.length === 0) return "no runs recorded"
  const names = new Map(connections.map((c) => [c.accountId, c.accountName]))
  const header = [
    "STARTED",
    ...(view.wide ? ["RUN", "ACCOUNT ID"] : []),
    "ACCOUNT",
    "STREAM",
    "PASS",
    "OUTCOME",
    "ROWS",
    ...(view.wide ? ["WRITTEN", "DELETED"] : []),
    "POINTS",
    "TIME",
    "ERROR"
  ]
  const rows = runs.map((r) => [
    relativeTime(r.startedAt, view.now),
    ...(view.wide ? [String(r.id), r.accountId] : []),
    names.get(r.accountId) ?? r.accountId,
    r.stream,
    r.kind,
    r.outcome,
    count(r.rows),
    ...(view.wide ? [count(r.rowsWritten), count(r.rowsDeleted)] : []),
    count(r.costPoints),
    formatDuration((r.finishedAt?.getTime() ?? view.now) - r.startedAt.getTime()),
    r.error ?? ""
  ])
  const at = (name: string) => header.indexOf(name)
  return alignedTable(
    [header, ...rows],
    view.wide
      ? { right: [at("ROWS"), at("POINTS"), at("TIME")] }
      : { maxWidth: view.maxWidth, shrink: [at("ACCOUNT"), at("ERROR")], optional: [at("POINTS"), at("PASS"), at("ERROR")], right: [at("ROWS"), at("POINTS"), at("TIME")] }
  )
}

/** A run as `status --runs --json` prints it. */
export const runJson = (r: PastRun, connections: ReadonlyArray<Connection>) => ({
  ...r,
  accountName: connections.find((c) => c.accountId === r.accountId)?.accountName ?? null,
  startedAt: r.startedAt.toISOString(),
  finishedAt: r.finishedAt?.toISOString() ?? null
})
