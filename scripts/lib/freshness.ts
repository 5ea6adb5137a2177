/**
 * The README's freshness table: per table, what keeps it current (an incremental pass at every `sync`, the
 * service's change events through `serve`, full passes) and on which cadence, with the default settings, and what a
 * row costs of the account's budget: requested (what the budget reserves) and spent (measured).
 */
import { Duration, Option } from "effect"
import { formatDuration } from "../../src/cli/output/time.js"
import { requestedPointsPerRow } from "../../src/run/progressEstimate.js"
import type { AnyStream } from "../../src/sync/streams/Stream.js"
import { fullPassCadence, staleAfter, type SyncSettingsShape } from "../../src/sync/SyncSettings.js"

/** Points a row spent, measured: a backfill of one emulator account (`--jobs 200`), cost_points / rows of sync_runs. */
export interface MeasuredCost {
  readonly on: string
  readonly how: string
  readonly pointsPerRow: Readonly<Record<string, number>>
}

const every = (d: Duration.Duration) => formatDuration(Duration.toMillis(d))

export const freshnessTable = (streams: ReadonlyArray<AnyStream>, settings: SyncSettingsShape, measured: MeasuredCost): string => {
  const rows = [
    "| table | incremental pass | change events (`serve`) | full pass (finds deletions) | stale after | points a row: requested / spent |",
    "| --- | --- | --- | --- | --- | --- |"
  ]
  for (const s of streams) {
    const incremental = Option.isSome(s.incremental.plan(new Date(0)))
    const spent = measured.pointsPerRow[s.name]
    const cells = [
      `\`${s.table}\``,
      incremental ? `every \`sync\` (${every(settings.syncEvery)})` : "**none**",
      s.topic === undefined ? "none" : `\`${s.topic}_*\`, within seconds`,
      `every ${every(fullPassCadence(settings, s))}`,
      every(staleAfter(settings, s)),
      `${requestedPointsPerRow(s).toFixed(0)} / ${spent === undefined ? "-" : spent.toFixed(0)}`
    ]
    rows.push(`| ${cells.join(" | ")} |`)
  }
  const fullOnly = streams.filter((s) => Option.isNone(s.incremental.plan(new Date(0)))).map((s) => `\`${s.table}\``)
  return [
    ...rows,
    "",
    `Without \`serve\`, ${fullOnly.join(", ")} have no incremental pass and are as old as their last full pass: up to`,
    `${every(settings.fullPassEvery)} (SYNC_FULL_PASS_EVERY; SYNC_EVERY for the incremental passes). Child tables (line items) and \`custom_fields\``,
    "land with their parent. A row's *requested* points are what a full page asks per row, which the budget reserves",
    "before sending it; *spent* is what the service charged, and what sets a backfill's pace at the restore rate (500",
    `points a second): ${measured.how} (${measured.on}).`
  ].join("\n")
}
