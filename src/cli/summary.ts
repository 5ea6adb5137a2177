import { Console, Effect } from "effect"
import type { RunCounts } from "../sync/Runs.js"
import type { AccountReport } from "../sync/SyncRunner.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { alignedTable } from "./table.js"

/** Points spent on being exact (overlaps, pages asked again, end-of-pass checks), and their share of the pass's. */
const exactness = (c: RunCounts) =>
  c.overheadPoints > 0 && c.costPoints > 0 ? `${Math.round(c.overheadPoints)} (${((100 * c.overheadPoints) / c.costPoints).toFixed(1)}%)` : String(Math.round(c.overheadPoints))

/** The end-of-run table: one line per account and stream. */
export const renderSummary = (reports: ReadonlyArray<AccountReport>): string => {
  const header = ["account", "name", "outcome", "stream", "pass", "pages", "rows", "written", "deleted", "points", "exactness", "pts/row", "wait s", "throttled"]
  const rows: Array<Array<string>> = [header]
  for (const a of reports) {
    if (a.streams.length === 0) {
      rows.push([a.accountId, a.accountName, a.outcome, "-", "-", "0", "0", "0", "0", "0", "0", "-", "0.0", "0"])
      continue
    }
    for (const s of a.streams) {
      const c = s.counts
      rows.push([
        a.accountId,
        a.accountName,
        s.outcome === "succeeded" ? a.outcome : s.outcome,
        s.stream,
        s.kind === "none"
          ? s.nextIncrementalAt
            ? `up to date (events flow; incremental due ${s.nextIncrementalAt.toISOString()})`
            : `up to date (full pass due ${s.nextFullPassAt?.toISOString() ?? "-"})`
          : `${s.kind}${s.resumed ? " (resumed)" : ""}`,
        String(c.pages),
        String(c.rows),
        String(c.rowsWritten),
        String(c.rowsDeleted),
        String(Math.round(c.costPoints)),
        exactness(c),
        c.rows > 0 ? (c.costPoints / c.rows).toFixed(1) : "-",
        (c.throttleWaitMs / 1000).toFixed(1),
        String(c.throttled)
      ])
    }
  }
  return alignedTable(rows)
}

/** How a run ends: its exit code and the lines that say why (failed, needs reconnecting, skipped). */
export interface RunExit {
  readonly code: number
  readonly message: string | undefined
}

/** 1 when an account failed, 3 when every account finished but some need reconnecting (listed), 0 otherwise. */
export const runExit = (reports: ReadonlyArray<AccountReport>): RunExit => {
  const failed = reports.filter((r) => r.outcome === "failed")
  const reconnect = reports.filter((r) => r.outcome === "needs-reconnect")
  const lines: Array<string> = []
  for (const r of failed) lines.push(`failed: ${r.accountId}${r.accountName ? ` (${r.accountName})` : ""}: ${r.message ?? "see the log"}`)
  if (reconnect.length > 0) {
    lines.push("these accounts need reconnecting (run `account-sync connect`):")
    for (const r of reconnect) lines.push(`  ${r.accountId}${r.accountName ? ` (${r.accountName})` : ""}: ${r.message ?? "revoked"}`)
  }
  for (const r of reports.filter((r) => r.outcome === "skipped")) lines.push(`skipped: ${r.accountId}: ${r.message ?? ""}`)
  const message = lines.length > 0 ? lines.join("\n") : undefined
  const code = failed.length > 0 ? ExitCodes.failure : reconnect.length > 0 ? ExitCodes.needsReconnect : ExitCodes.ok
  return { code, message }
}

/** Prints the summary on stdout and ends with the run's exit code (its reasons on stderr). */
export const reportAndExit = (reports: ReadonlyArray<AccountReport>) =>
  Effect.gen(function* () {
    yield* Console.log(renderSummary(reports))
    const { code, message } = runExit(reports)
    if (code !== ExitCodes.ok) return yield* new ExitWith({ code, ...(message ? { message } : {}) })
    if (message) yield* Console.error(message)
  })
