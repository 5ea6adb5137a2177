import type { Connection } from "../auth/Connections.js"
import type { AccountEvents, UnmatchedAccount } from "../changes/queuedEvents.js"
import { count, safe } from "./output/text.js"
import { relativeTime } from "./output/time.js"
import { accountLabel, fit, iso, type StatusView } from "./statusView.js"
import { alignedTable } from "./table.js"

/** Change events as `status` shows them: each account's queue, and deliveries for accounts no connection matches. */

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
