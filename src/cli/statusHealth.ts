import { Duration, Option } from "effect"
import { printable } from "../observability/printable.js"
import type { ApiVersionCondition, StreamFreshness } from "../health/Health.js"
import { safe, wrap } from "./output/text.js"
import { iso } from "./statusView.js"

/** The service's side of `status`: the API version pinned and answered, and the streams not current within their cadence. */

/** The API version section: the pin, and what the service answered to it (a warning, another version). */
export const apiVersionLines = (v: ApiVersionCondition, width = Number.POSITIVE_INFINITY): string => {
  const state = Option.getOrUndefined(v.state)
  if (state === undefined) return wrap(`API version ${v.pinned} (SERVICE_GRAPHQL_VERSION): no answer recorded yet`, width, 2)
  const lines = [`API version ${v.pinned} (SERVICE_GRAPHQL_VERSION): answered by ${printable(state.answered, 40)} since ${state.answeredSince.toISOString()}`]
  if (state.answered !== v.pinned) {
    lines.push(
      `  REPLACED by the service: ${v.pinned} is no longer supported and ${printable(state.answered, 40)} answers instead; runs fail until the pin moves (account-sync schema check, then SERVICE_GRAPHQL_VERSION) or SERVICE_GRAPHQL_VERSION_REPLACED=allow`
    )
  }
  if (state.warning !== null) lines.push(`  the service warns (since ${state.warnedSince?.toISOString() ?? "-"}): ${printable(state.warning)}`)
  // within the width, continued on lines indented under their first
  return lines.map((line) => `${line.startsWith("  ") ? "  " : ""}${wrap(line, width, 4)}`).join("\n")
}

export const apiVersionJson = (v: ApiVersionCondition) =>
  Option.match(v.state, {
    onNone: () => ({ pinned: v.pinned, answered: null, replaced: false, warning: null }),
    onSome: (s) => ({
      pinned: v.pinned,
      answered: s.answered,
      answeredSince: s.answeredSince.toISOString(),
      replaced: s.answered !== v.pinned,
      warning: s.warning,
      warnedSince: iso(s.warnedSince)
    })
  })

/** The stale streams section: one line each (nothing when every stream is current within its cadence). */
export const staleLines = (streams: ReadonlyArray<StreamFreshness>): string =>
  streams
    .filter((f) => f.stale)
    .map(
      (f) =>
        safe(`stale: ${f.accountId} ${f.stream}: last known current ${iso(f.currentAt) ?? "never"}, ${Duration.format(Duration.seconds(Math.round(f.ageMs / 1000)))} ago (stale after ${Duration.format(Duration.millis(f.staleAfterMs))})`)
    )
    .join("\n")
