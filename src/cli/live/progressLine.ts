import type { ProgressSnapshot } from "../../sync/Progress.js"
import { rowsPerSecond } from "../../sync/Progress.js"
import { remainingMs } from "../../sync/progressEstimate.js"
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
 * the service's count (with a bar and a percentage), the time left, rows per second and the time spent waiting for
 * the account's budget. When the terminal is narrow the least needed parts go first (bar, wait, rate), then the name
 * is shortened; the line is cut as a last resort.
 */
export const progressLine = (s: ProgressSnapshot, now: number, width: number): string => {
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
            const ms = remainingMs({ remainingRows: total - landed, pointsPerRow: s.pointsPerRow, bucket: s.bucket, rowsPerSecond: rate })
            return ms === undefined ? undefined : `${formatDuration(ms)} left`
          })()
  const parts = {
    name: safe(s.accountName || s.accountId),
    stream,
    bar: total !== undefined && total > 0 && s.done === undefined ? bar(landed / total) : undefined,
    rows,
    left,
    rate: s.done === undefined ? `${count(rate)} rows/s` : formatDuration(elapsed),
    wait: s.counts.throttleWaitMs >= 100 ? `waited ${formatDuration(s.counts.throttleWaitMs)}` : undefined
  }
  const compose = (p: typeof parts, nameMax: number) =>
    [cutToWidth(p.name, nameMax), p.stream, p.bar, p.rows, p.left, p.rate, p.wait].filter((x): x is string => x !== undefined).join("  ")
  let shown = { ...parts }
  let nameMax = nameWidth
  for (const drop of ["bar", "wait", "rate", "name", "left"] as const) {
    if (displayWidth(compose(shown, nameMax)) <= width) break
    if (drop === "name") nameMax = 12
    else shown = { ...shown, [drop]: undefined }
  }
  return cutToWidth(compose(shown, nameMax), width)
}
