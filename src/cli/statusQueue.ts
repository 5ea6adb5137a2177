import type { Connection } from "../auth/Connections.js"
import type { QueueView } from "../jobs/QueueStatus.js"
import { count } from "./output/text.js"
import { relativeTime } from "./output/time.js"
import { accountLabel, fit, type StatusView } from "./statusView.js"
import { alignedTable } from "./table.js"

/** The job queue (with workers) as `status` shows it: jobs per kind and state, and each account's job. */

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
