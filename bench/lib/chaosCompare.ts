import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { compareStream, type StreamComparison } from "../../src/demo/exactness.js"
import { allStreams } from "../../src/sync/streams/index.js"
import type { ChaosOptions } from "./chaosOptions.js"
import type { Check } from "./chaosReport.js"
import type { EmulatorProcess } from "./emulatorProcess.js"

/** runChaos's comparison of the warehouse with the emulator, adding its checks to `checks`; faults off meanwhile. */
export const chaosComparer = (emulator: EmulatorProcess, accountIds: ReadonlyArray<string>, options: ChaosOptions, checks: Array<Check>) => {
  const { admin } = emulator
  let faultPhase = 0
  const compareAll = (label: string, final: boolean) =>
    Effect.gen(function* () {
      yield* admin.setFaults({})
      const sql = yield* SqlClient.SqlClient
      // a full pass resumed by this sync does not go back for edits behind its cursor (the next incremental
      // pass does): mid-way, only accounts whose last completed pass was incremental must be exact
      const lastKinds = yield* sql<{ account_id: string; kind: string }>`
        SELECT DISTINCT ON (account_id) account_id, kind FROM sync_runs WHERE outcome = 'succeeded'
        ORDER BY account_id, id DESC`
      const incremental = new Set(lastKinds.filter((r) => r.kind === "incremental").map((r) => r.account_id))
      const compared = final ? accountIds : accountIds.filter((id) => incremental.has(id))
      // mid-way the jobs (what the incremental syncs are about); at the end every stream of every account
      const streams = final ? allStreams : allStreams.filter((st) => st.name === "jobs")
      const results: Array<StreamComparison & { accountId: string }> = yield* Effect.forEach(compared, (id) =>
        // what the service returns to the app: the withheld nodes of one account left out
        Effect.forEach(streams, (stream) => Effect.map(compareStream(admin, stream, id, emulator.clientId), (c) => ({ ...c, accountId: id })))
      ).pipe(Effect.map((all) => all.flat()))
      // a new fault seed per phase: re-using it would replay the same draws
      faultPhase++
      yield* admin.setFaults({ ...options.faults, seed: (options.faults.seed ?? options.seed) + faultPhase })
      const bad = results.filter(
        (c) => c.missing + c.mismatched + c.wronglyDeleted > 0 || (final && c.stillLive + c.nestedMismatched > 0)
      )
      const rows = results.reduce((n, c) => n + c.serviceRows, 0)
      const pendingDeletes = results.reduce((n, c) => n + c.stillLive, 0)
      if (final) {
        const marked = results.reduce((n, c) => n + c.wronglyDeleted, 0)
        const kept = results.reduce((n, c) => n + c.keptWithheld, 0)
        checks.push({
          name: "deletions missed (live rows whose record the service no longer has) and live rows marked deleted, every stream of every account",
          ok: pendingDeletes === 0 && marked === 0,
          detail: `${pendingDeletes} missed, ${marked} live rows marked deleted; ${kept} rows of records withheld from the app kept live`
        })
      }
      checks.push({
        name: final
          ? "warehouse == emulator for every stream of every account (every mapped column, line items and custom fields per parent, deleted_at correct)"
          : `${label}: every live job landed exactly (deletions wait for the full pass: ${pendingDeletes} pending)`,
        ok: bad.length === 0,
        detail:
          bad.length === 0
            ? `${rows} live rows of ${streams.length} stream(s) compared over ${compared.length} accounts` +
              (compared.length < accountIds.length ? ` (${accountIds.length - compared.length} finished a resumed full pass instead)` : "")
            : bad
                .map((c) => `${c.accountId} ${c.stream}: missing ${c.missing}, differing ${c.mismatched}, wrongly deleted ${c.wronglyDeleted}, still live ${c.stillLive}, nested ${c.nestedMismatched}; ${c.examples.join("; ")}`)
                .join(" | ")
      })
    })
  return compareAll
}
