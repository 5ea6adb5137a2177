import type { Connection } from "../auth/Connections.js"
import type { StreamFreshness } from "./Health.js"
import type { AccountLastRun, StreamState } from "./StreamStatus.js"

/**
 * Where an account stands, one word, worst first: revoked or disconnected (the connection), failing (a stream's latest
 * run failed), backfilling (a stream never finished a full pass), stale (a stream not current within its cadence),
 * else active.
 */
export type AccountState = "revoked" | "disconnected" | "failing" | "backfilling" | "stale" | "active"

/** The order the states are counted and listed in: what needs a person first. */
export const accountStates: ReadonlyArray<AccountState> = ["failing", "revoked", "stale", "backfilling", "disconnected", "active"]

/** One account of the fleet, from its connection, its streams' states and their freshness. */
export interface FleetAccount {
  readonly connection: Connection
  readonly state: AccountState
  /** Streams whose latest run failed, with why. */
  readonly failing: ReadonlyArray<{ readonly stream: string; readonly error: string | null }>
  /** Streams not current within their cadence (active accounts only). */
  readonly stale: ReadonlyArray<StreamFreshness>
  /** Streams with a finished full pass, of `streams`. */
  readonly backfilled: number
  readonly streams: number
  /** A stream with a run going now: its pass and the rows of its order landed. */
  readonly running: { readonly stream: string; readonly kind: string; readonly position: number } | null
  readonly lastRun: AccountLastRun | undefined
}

/** What `status` narrows the fleet to: accounts by id (none: all), streams by name (none: all), failing, stale. */
export interface FleetFilter {
  readonly accounts: ReadonlyArray<string>
  readonly streams: ReadonlyArray<string>
  readonly failing: boolean
  readonly stale: boolean
}

const stateOf = (connection: Connection, failing: number, unbackfilled: number, stale: number): AccountState =>
  connection.status !== "active"
    ? connection.status
    : failing > 0
      ? "failing"
      : unbackfilled > 0
        ? "backfilling"
        : stale > 0
          ? "stale"
          : "active"

/**
 * Every account with its state, over the streams the filter keeps (a stream filter judges an account by those streams
 * alone), narrowed by the filter, in the order of `accountStates` then by name.
 */
export const fleetAccounts = (
  connections: ReadonlyArray<Connection>,
  states: ReadonlyArray<StreamState>,
  freshness: ReadonlyArray<StreamFreshness>,
  filter: FleetFilter
): ReadonlyArray<FleetAccount> => {
  const keepStream = (stream: string) => filter.streams.length === 0 || filter.streams.includes(stream)
  const byAccount = <T extends { readonly accountId: string; readonly stream: string }>(rows: ReadonlyArray<T>) => {
    const out = new Map<string, Array<T>>()
    for (const r of rows) if (keepStream(r.stream)) out.set(r.accountId, [...(out.get(r.accountId) ?? []), r])
    return out
  }
  const streamsOf = byAccount(states)
  const freshnessOf = byAccount(freshness)
  const rank = new Map(accountStates.map((s, i) => [s, i]))
  return connections
    .filter((c) => filter.accounts.length === 0 || filter.accounts.includes(c.accountId))
    .map((connection): FleetAccount => {
      const streams = streamsOf.get(connection.accountId) ?? []
      const failing = streams.filter((s) => s.lastRun?.outcome === "failed").map((s) => ({ stream: s.stream, error: s.lastRun!.error }))
      const stale = connection.status === "active" ? (freshnessOf.get(connection.accountId) ?? []).filter((f) => f.stale) : []
      const backfilled = streams.filter((s) => s.lastFullPassAt !== null).length
      const going = streams.find((s) => s.lastRun?.outcome === "running")
      let lastRun: AccountLastRun | undefined
      for (const s of streams) {
        if (s.lastRun !== null && (lastRun === undefined || s.lastRun.startedAt > lastRun.startedAt)) {
          lastRun = { stream: s.stream, kind: s.lastRun.kind, outcome: s.lastRun.outcome, startedAt: s.lastRun.startedAt, finishedAt: s.lastRun.finishedAt }
        }
      }
      return {
        connection,
        state: stateOf(connection, failing.length, streams.length - backfilled, stale.length),
        failing,
        stale,
        backfilled,
        streams: streams.length,
        running: going === undefined ? null : { stream: going.stream, kind: going.lastRun!.kind, position: going.inProgress?.position ?? going.lastRun!.rows },
        lastRun
      }
    })
    .filter((a) => (!filter.failing || a.failing.length > 0) && (!filter.stale || a.stale.length > 0))
    .sort((a, b) => rank.get(a.state)! - rank.get(b.state)! || a.connection.accountName.localeCompare(b.connection.accountName))
}

/** How many accounts are in each state. */
export const countByState = (accounts: ReadonlyArray<FleetAccount>): Readonly<Record<AccountState, number>> => {
  const counts: Record<AccountState, number> = { failing: 0, revoked: 0, stale: 0, backfilling: 0, disconnected: 0, active: 0 }
  for (const a of accounts) counts[a.state] += 1
  return counts
}
