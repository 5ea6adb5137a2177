import { Console, Effect } from "effect"
import { printable } from "../observability/printable.js"
import type { Mode } from "../sync/pass/PassPlan.js"
import { type RunCounts, zeroCounts } from "../run/Runs.js"
import type { StreamReport } from "../run/streamRunResult.js"
import type { AccountReport } from "../run/SyncRunner.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { count, displayWidth, safe, wrap } from "./output/text.js"
import { formatDuration } from "./output/time.js"
import { alignedTable, type TableRow } from "./table.js"

/** How a run's summary is printed. */
export interface SummaryOptions {
  readonly mode: Mode
  /** From the run's start to its end. */
  readonly durationMs: number
  /** Ids and every figure (pages, exactness, points per row, throttled, next pass), whatever the width. */
  readonly wide?: boolean
  /** The widest a line may be (default: no limit). */
  readonly maxWidth?: number
}

/** Points spent on being exact (overlaps, pages asked again, end-of-pass checks), and their share of the pass's. */
const exactness = (c: RunCounts) =>
  c.overheadPoints > 0 && c.costPoints > 0 ? `${Math.round(c.overheadPoints)} (${((100 * c.overheadPoints) / c.costPoints).toFixed(1)}%)` : String(Math.round(c.overheadPoints))

/** Every stream's counts of every account, added up. */
const totalOf = (reports: ReadonlyArray<AccountReport>): RunCounts => {
  const total: Record<keyof RunCounts, number> = { ...zeroCounts }
  for (const c of reports.flatMap((a) => a.streams.map((s) => s.counts))) {
    for (const key of Object.keys(total) as Array<keyof RunCounts>) total[key] += c[key]
  }
  return total
}

/** A stream that succeeded says so, whatever became of the account's later streams ("synced" when all did). */
const outcomeText = (account: AccountReport, s: StreamReport) =>
  s.outcome === "up-to-date" ? "up to date" : s.outcome === "succeeded" && account.outcome === "synced" ? "synced" : s.outcome

const passText = (s: StreamReport) => (s.kind === "none" ? "-" : `${s.kind}${s.resumed ? " (resumed)" : ""}`)

/** When a stream that was up to date is due next. */
const nextText = (s: StreamReport) =>
  s.nextIncrementalAt ? `incremental ${s.nextIncrementalAt.toISOString()}` : s.nextFullPassAt ? `full ${s.nextFullPassAt.toISOString()}` : "-"

const accountOutcomeText = (a: AccountReport) => (a.outcome === "needs-reconnect" ? "needs reconnecting" : a.outcome)

/** Every account's name is its own: the summary can name accounts without their ids. */
export const namesAreUnique = (names: ReadonlyArray<string>) => names.every((n) => n.length > 0) && new Set(names).size === names.length

/** The end-of-run table: one line per account and stream, a total, and a line with the outcomes and the duration. */
export const renderSummary = (reports: ReadonlyArray<AccountReport>, options: SummaryOptions): string => {
  const wide = options.wide === true
  const byName = namesAreUnique(reports.map((r) => r.accountName))
  const accountCell = (a: AccountReport) => (wide || byName ? a.accountName : `${a.accountName} (${a.accountId})`)
  const header = [
    ...(wide ? ["ACCOUNT ID"] : []),
    "ACCOUNT",
    "STREAM",
    "PASS",
    "OUTCOME",
    ...(wide ? ["PAGES"] : []),
    "ROWS",
    "WRITTEN",
    "DELETED",
    "POINTS",
    ...(wide ? ["EXACTNESS", "PTS/ROW", "THROTTLED"] : []),
    "WAITED",
    "TIME",
    ...(wide ? ["NEXT"] : [])
  ]
  const figures = (c: RunCounts, durationMs: number) => ({
    pages: String(c.pages),
    numbers: [count(c.rows), count(c.rowsWritten), count(c.rowsDeleted), count(c.costPoints)],
    extra: [exactness(c), c.rows > 0 ? (c.costPoints / c.rows).toFixed(1) : "-", String(c.throttled)],
    times: [formatDuration(c.throttleWaitMs), formatDuration(durationMs)]
  })
  const line = (id: string, account: string, stream: string, pass: string, outcome: string, c: RunCounts, durationMs: number, next: string) => {
    const f = figures(c, durationMs)
    return [
      ...(wide ? [id] : []),
      account,
      stream,
      pass,
      outcome,
      ...(wide ? [f.pages] : []),
      ...f.numbers,
      ...(wide ? f.extra : []),
      ...f.times,
      ...(wide ? [next] : [])
    ]
  }
  /** One line per stream, the account's name on its first (`grouped`: on a line of its own above its streams). */
  const rowsOf = (grouped: boolean): Array<TableRow> => {
    const rows: Array<TableRow> = [grouped ? header.filter((h) => h !== "ACCOUNT") : header]
    const cells = (cells: ReadonlyArray<string>) => (grouped ? cells.filter((_, i) => i !== header.indexOf("ACCOUNT")) : cells)
    for (const a of reports) {
      if (grouped) rows.push({ caption: accountCell(a) })
      if (a.streams.length === 0) {
        rows.push(cells(line(a.accountId, accountCell(a), grouped ? "  -" : "-", "-", accountOutcomeText(a), zeroCounts, 0, "-")))
        continue
      }
      a.streams.forEach((s, i) =>
        rows.push(cells(line(a.accountId, i === 0 ? accountCell(a) : "", grouped ? `  ${s.stream}` : s.stream, passText(s), outcomeText(a, s), s.counts, s.durationMs, nextText(s))))
      )
    }
    const total = line("", "TOTAL", "", "", `${reports.length} account${reports.length === 1 ? "" : "s"}`, totalOf(reports), options.durationMs, "")
    rows.push(grouped ? ["TOTAL", ...cells(total).slice(1)] : total)
    return rows
  }
  const tableOf = (grouped: boolean) => {
    const rows = rowsOf(grouped)
    const columns = rows[0] as ReadonlyArray<string>
    const at = (names: ReadonlyArray<string>) => names.map((h) => columns.indexOf(h)).filter((i) => i >= 0)
    return alignedTable(rows, {
      ...(options.maxWidth !== undefined && !wide ? { maxWidth: options.maxWidth } : {}),
      shrink: at(["ACCOUNT", "OUTCOME"]),
      optional: at(["WAITED", "POINTS", "DELETED", "WRITTEN", "PASS"]),
      right: at(["PAGES", "ROWS", "WRITTEN", "DELETED", "POINTS", "PTS/ROW", "THROTTLED", "WAITED", "TIME"])
    })
  }
  // where the names would be cut (a terminal of 80 columns), each account's name is a line above its streams
  const fits = options.maxWidth === undefined || wide || alignedTable(rowsOf(false)).split("\n").every((l) => displayWidth(l) <= options.maxWidth!)
  const table = tableOf(!fits)
  const waitedShown = /\bWAITED\b/.test(table.slice(0, table.indexOf("\n")))
  const last = outcomeLine(reports, options, waitedShown)
  return `${table}\n${options.maxWidth === undefined || wide ? last : wrap(last, options.maxWidth, 2)}`
}

/** "backfill took 34.2 s: 2 accounts synced, 1 needs reconnecting". */
const outcomeLine = (reports: ReadonlyArray<AccountReport>, options: SummaryOptions, waitedShown: boolean) => {
  const by = new Map<string, number>()
  for (const r of reports) by.set(accountOutcomeText(r), (by.get(accountOutcomeText(r)) ?? 0) + 1)
  const outcomes = [...by].map(([outcome, n]) => `${n} ${outcome}`).join(", ")
  const waited = totalOf(reports).throttleWaitMs
  // each stream's WAITED is part of its TIME; accounts synced side by side wait at the same time, and the total adds them
  const overlap =
    waitedShown && reports.length > 1 && waited > options.durationMs
      ? ` (WAITED adds up ${count(reports.length)} accounts' waits for their budgets, side by side: ${formatDuration(waited)} in ${formatDuration(options.durationMs)})`
      : ""
  return `${options.mode} took ${formatDuration(options.durationMs)}: ${reports.length === 0 ? "no active account" : outcomes}${overlap}`
}

const countsJson = (c: RunCounts) => ({
  pages: c.pages,
  rows: c.rows,
  rowsWritten: c.rowsWritten,
  rowsDeleted: c.rowsDeleted,
  rowsConfirmed: c.rowsConfirmed,
  costPoints: Math.round(c.costPoints),
  exactnessPoints: Math.round(c.overheadPoints),
  throttleWaitMs: Math.round(c.throttleWaitMs),
  throttled: c.throttled
})

/** The summary as `--json` prints it: ids, names, absolute times, every figure. */
export const summaryJson = (reports: ReadonlyArray<AccountReport>, options: SummaryOptions & { readonly startedAt: Date }) => ({
  mode: options.mode,
  startedAt: options.startedAt.toISOString(),
  durationMs: Math.round(options.durationMs),
  accounts: reports.map((a) => ({
    accountId: a.accountId,
    accountName: a.accountName,
    outcome: a.outcome,
    message: a.message ?? null,
    streams: a.streams.map((s) => ({
      stream: s.stream,
      kind: s.kind,
      outcome: s.outcome,
      resumed: s.resumed,
      durationMs: Math.round(s.durationMs),
      ...countsJson(s.counts),
      error: s.error ?? null,
      nextFullPassAt: s.nextFullPassAt?.toISOString() ?? null,
      nextIncrementalAt: s.nextIncrementalAt?.toISOString() ?? null
    }))
  })),
  totals: countsJson(totalOf(reports))
})

/** How a run ends: its exit code and the lines that say why (failed, needs reconnecting, skipped). */
export interface RunExit {
  readonly code: number
  readonly message: string | undefined
}

const who = (r: AccountReport) => safe(r.accountName ? `${r.accountName} (${r.accountId})` : r.accountId)

/** What to do when the service replaced the pinned API version (the run's last lines). */
const replacedLines = (reports: ReadonlyArray<AccountReport>): ReadonlyArray<string> => {
  const replaced = reports.flatMap((r) => (r.apiVersionReplaced ? [r.apiVersionReplaced] : []))
  if (replaced.length === 0) return []
  const { pinned } = replaced[0]!
  const answered = [...new Set(replaced.map((r) => printable(r.answered, 40)))].join(", ")
  return [
    `the service replaced the pinned API version ${pinned} (SERVICE_GRAPHQL_VERSION) with ${answered}: ${pinned} is no longer supported, and nothing of the other version's answers was landed.`,
    `  check what the program sends against that version's schema (\`account-sync schema check SCHEMA.graphql\`), then set SERVICE_GRAPHQL_VERSION=${answered.split(", ")[0]};`,
    "  or go on with the version the service chose: SERVICE_GRAPHQL_VERSION_REPLACED=allow."
  ]
}

/**
 * 4 when the service replaced the pinned API version, 1 when an account failed, 3 when every account finished but some
 * need reconnecting (listed), 0 otherwise.
 */
export const runExit = (reports: ReadonlyArray<AccountReport>, database = "Postgres"): RunExit => {
  const failed = reports.filter((r) => r.outcome === "failed")
  const reconnect = reports.filter((r) => r.outcome === "needs-reconnect")
  const replaced = replacedLines(reports)
  const lines: Array<string> = []
  const lost = reports.find((r) => r.databaseLost !== undefined)
  if (lost !== undefined) {
    lines.push(
      safe(`${database} stopped answering during the run (${lost.databaseLost}): the streams that finished are kept; run the command again once it answers, and the passes resume from their checkpoints`)
    )
  }
  for (const r of failed) lines.push(`failed: ${who(r)}: ${safe(r.message ?? "see the log")}`)
  if (reconnect.length > 0) {
    lines.push("these accounts need reconnecting (run `account-sync connect`):")
    for (const r of reconnect) lines.push(`  ${who(r)}: ${safe(r.message ?? "revoked")}`)
  }
  for (const r of reports.filter((r) => r.outcome === "skipped")) lines.push(`skipped: ${who(r)}: ${safe(r.message ?? "")}`)
  lines.push(...replaced)
  const message = lines.length > 0 ? lines.join("\n") : undefined
  const code =
    replaced.length > 0
      ? ExitCodes.apiVersionReplaced
      : failed.length > 0
        ? ExitCodes.failure
        : reconnect.length > 0
          ? ExitCodes.needsReconnect
          : ExitCodes.ok
  return { code, message }
}

/** The run's figures as one log line (piped runs read it instead of the table). */
export const logRunSummary = (reports: ReadonlyArray<AccountReport>, options: SummaryOptions, level: "info" | "debug" = "info") => {
  const total = totalOf(reports)
  return (level === "info" ? Effect.logInfo : Effect.logDebug)(`${options.mode} finished`).pipe(
    Effect.annotateLogs({
      mode: options.mode,
      accounts: reports.length,
      synced: reports.filter((r) => r.outcome === "synced").length,
      failed: reports.filter((r) => r.outcome === "failed").length,
      needsReconnect: reports.filter((r) => r.outcome === "needs-reconnect").length,
      skipped: reports.filter((r) => r.outcome === "skipped").length,
      rows: total.rows,
      rowsWritten: total.rowsWritten,
      rowsDeleted: total.rowsDeleted,
      points: Math.round(total.costPoints),
      throttleWaitMs: Math.round(total.throttleWaitMs),
      durationMs: Math.round(options.durationMs)
    })
  )
}

/** Prints the summary on stdout (a table, or JSON) and ends with the run's exit code (its reasons on stderr). */
export const reportAndExit = (
  reports: ReadonlyArray<AccountReport>,
  options: SummaryOptions & { readonly json: boolean; readonly startedAt: Date; readonly database?: string }
) =>
  Effect.gen(function* () {
    // on a terminal the table below says it all to the person reading it; the log line is for logs read by machines
    yield* logRunSummary(reports, options, process.stdout.isTTY === true && !options.json ? "debug" : "info")
    yield* Console.log(options.json ? JSON.stringify(summaryJson(reports, options), null, 2) : renderSummary(reports, options))
    const { code, message } = runExit(reports, options.database)
    if (code !== ExitCodes.ok) return yield* new ExitWith({ code, ...(message ? { message } : {}) })
    if (message) yield* Console.error(message)
  })
