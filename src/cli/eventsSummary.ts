import { Console, Effect } from "effect"
import type { DrainReport } from "../changes/EventConsumer.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { alignedTable } from "./table.js"

/** The end of `sync --events-only`: one line per account with queued events. */
export const renderDrainSummary = (reports: ReadonlyArray<DrainReport>): string => {
  if (reports.length === 0) return "no change events waiting"
  const header = ["account", "outcome", "applied", "failed", "deferred", "landed", "deleted", "points"]
  return alignedTable([
    header,
    ...reports.map((r) => [r.accountId, r.outcome, String(r.applied), String(r.failed), String(r.deferred), String(r.landed), String(r.deleted), String(Math.round(r.costPoints))])
  ])
}

/**
 * 4 when the service replaced the pinned API version (the events wait), 1 when events failed (they are retried later;
 * `status` shows them), 3 when an account needs reconnecting, else 0.
 */
export const reportDrainAndExit = (reports: ReadonlyArray<DrainReport>) =>
  Effect.gen(function* () {
    yield* Console.log(renderDrainSummary(reports))
    const reconnect = reports.filter((r) => r.outcome === "needs-reconnect")
    const failed = reports.filter((r) => r.failed > 0)
    const replaced = reports.filter((r) => r.outcome === "api-version-replaced")
    const lines = [
      ...replaced.map(
        (r) => `${r.accountId}: the service replaced the pinned API version (SERVICE_GRAPHQL_VERSION); its events wait (see the log and \`account-sync status\`)`
      ),
      ...failed.map((r) => `failed: ${r.accountId}: ${r.failed} change event(s) failed (retried with backoff; see \`account-sync status\`)`),
      ...reconnect.map((r) => `${r.accountId} needs reconnecting (run \`account-sync connect\`); its events wait`),
      ...reports.filter((r) => r.outcome === "locked").map((r) => `skipped: ${r.accountId}: another account-sync process is writing it; its events wait`)
    ]
    const code = replaced.length > 0 ? ExitCodes.apiVersionReplaced : failed.length > 0 ? ExitCodes.failure : reconnect.length > 0 ? ExitCodes.needsReconnect : ExitCodes.ok
    if (code !== ExitCodes.ok) return yield* new ExitWith({ code, message: lines.join("\n") })
    if (lines.length > 0) yield* Console.error(lines.join("\n"))
  })
