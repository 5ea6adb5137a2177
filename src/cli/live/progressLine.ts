import type { ProgressSnapshot } from "../../run/Progress.js"
import { rowsPerSecond } from "../../run/Progress.js"
import { remainingMs } from "../../run/progressEstimate.js"
import { count, cutToWidth, displayWidth, safe } from "../output/text.js"
import { formatDuration } from "../output/time.js"

/** The widest an account's name is shown on its line. */
const nameWidth = 28
const barWidth = 12

const bar = (fraction: number) => {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * barWidth)
  return `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}]`
}

/**
 * One account's live line, at most `width` columns and never wrapped: its name, its stream as k/n, rows landed of
 * the service's count (with a bar and a percentage), the stream's time left and the account's (its later streams'
 * rows at the cost measured so far), rows per second and the time spent waiting for the account's budget. When the terminal is narrow the least needed parts go first (bar, wait, rate), then the name
 * is shortened; the line is cut as a last resort.
 */
/** What the display knows beyond the stream: the points a row is expected to cost, the account's time left. */
export interface LineEstimate {
  /** Before the stream's first page lands: its requested cost scaled by what the run measured so far. */
  readonly pointsPerRow?: number
  readonly accountLeftMs?: number
}

/** The stream's time left, from its own pace and the bucket's (the expected cost per row until one is measured). */
export const streamLeftMs = (s: ProgressSnapshot, now: number, pointsPerRow?: number): number | undefined => {
  const total = s.expectedRows
  if (total === undefined) return undefined
  const landed = s.landedBefore + s.counts.rows
  const perRow = s.counts.rows > 0 || pointsPerRow === undefined ? s.pointsPerRow : pointsPerRow
  return remainingMs({ remainingRows: total - landed, pointsPerRow: perRow, bucket: s.bucket, rowsPerSecond: rowsPerSecond(s.counts.rows, now - s.startedAtMs) })
}

export const progressLine = (s: ProgressSnapshot, now: number, width: number, estimate: LineEstimate = {}): string => {
  const elapsed = now - s.startedAtMs
  const rate = rowsPerSecond(s.counts.rows, elapsed)
  const landed = s.landedBefore + s.counts.rows
  const total = s.expectedRows
  const stream = `${safe(s.stream)} ${s.streamNumber}/${s.streams}${s.kind === "incremental" ? " incremental" : ""}`
  const rows = total !== undefined && total > 0 ? `${count(landed)}/${count(total)} rows ${Math.min(100, Math.floor((100 * landed) / total))}%` : `${count(landed)} rows`
  const left =
    s.done !== undefined
      ? s.done
      : total === undefined
        ? undefined
        : (() => {
            const ms = streamLeftMs(s, now, estimate.pointsPerRow)
            return ms === undefined ? undefined : `${formatDuration(ms)} left`
          })()
  const account =
    s.done === undefined && s.streamNumber < s.streams && estimate.accountLeftMs !== undefined ? `account ${formatDuration(estimate.accountLeftMs)} left` : undefined
  const parts = {
    name: safe(s.accountName || s.accountId),
    stream,
    bar: total !== undefined && total > 0 && s.done === undefined ? bar(landed / total) : undefined,
    rows,
    left,
    account,
    rate: s.done === undefined ? `${count(rate)} rows/s` : formatDuration(elapsed),
    wait: s.counts.throttleWaitMs >= 100 ? `waited ${formatDuration(s.counts.throttleWaitMs)}` : undefined
  }
  const compose = (p: typeof parts, nameMax: number) =>
    [cutToWidth(p.name, nameMax), p.stream, p.bar, p.rows, p.left, p.account, p.rate, p.wait].filter((x): x is string => x !== undefined).join("  ")
  let shown = { ...parts }
  let nameMax = nameWidth
  // the account's time left outlasts the stream's: when one must go, the stream's goes
  for (const drop of ["bar", "wait", "rate", "name", "left", "account"] as const) {
    if (displayWidth(compose(shown, nameMax)) <= width) break
    if (drop === "name") nameMax = 12
    else shown = { ...shown, [drop]: undefined }
  }
  return cutToWidth(compose(shown, nameMax), width)
}
