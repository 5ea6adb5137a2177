import type { Connection } from "../auth/Connections.js"
import { printable } from "../observability/printable.js"
import type { StreamState } from "../health/StreamStatus.js"
import { count, safe, wrap } from "./output/text.js"
import { relativeTime } from "./output/time.js"
import { accountLabel, fit, iso, type StatusView, textWidth } from "./statusView.js"
import { alignedTable, type TableRow } from "./table.js"

/** Where each stream of each account stands, as `status` shows it: JSON, a table, and what deletions could not be checked. */

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
