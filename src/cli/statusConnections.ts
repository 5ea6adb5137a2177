import type { Connection } from "../auth/Connections.js"
import type { AccountLastRun } from "../health/StreamStatus.js"
import { displayWidth, safe, wrap } from "./output/text.js"
import { relativeTime } from "./output/time.js"
import { accountLabel, type StatusView, textWidth } from "./statusView.js"
import { alignedTable } from "./table.js"

/** The connections `status` shows: as JSON, and as a table with the reasons of those not active. */

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
