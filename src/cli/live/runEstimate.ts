import type { AccountPlan, ProgressSnapshot, RunPlan } from "../../run/Progress.js"
import { accountRemainingMs, expectedPointsPerRow, runRemainingMs } from "../../run/progressEstimate.js"
import { count } from "../output/text.js"
import { formatDuration } from "../output/time.js"
import { type LineEstimate, streamLeftMs } from "./progressLine.js"

interface AccountState {
  plan?: AccountPlan
  startedAtMs: number
  /** Per finished stream: the points it spent and the points its rows requested. */
  readonly finished: Map<string, { readonly points: number; readonly requested: number }>
  current?: ProgressSnapshot
}

/**
 * What the live display estimates beyond one stream: the cost a row will have (measured against requested, over every
 * stream of the run so far), each account's time left (its later streams' rows at that cost), the run's.
 */
export class RunEstimate {
  private run: RunPlan | undefined
  private readonly accounts = new Map<string, AccountState>()
  /** How long each account that ended took. */
  private readonly durations: Array<number> = []
  private ended = 0

  runPlanned(plan: RunPlan): void {
    this.run = plan
  }

  accountPlanned(plan: AccountPlan, now: number): void {
    this.state(plan.accountId, now).plan = plan
  }

  report(s: ProgressSnapshot, now: number): void {
    const state = this.state(s.accountId, now)
    state.current = s
    if (s.done !== undefined) {
      state.finished.set(s.stream, { points: s.counts.costPoints, requested: s.counts.rows * s.requestedPointsPerRow })
      state.current = undefined
    }
  }

  accountEnded(accountId: string, now: number): void {
    const state = this.accounts.get(accountId)
    if (state === undefined) return
    this.durations.push(now - state.startedAtMs)
    this.accounts.delete(accountId)
    this.ended += 1
  }

  private state(accountId: string, now: number): AccountState {
    let state = this.accounts.get(accountId)
    if (state === undefined) {
      state = { startedAtMs: now, finished: new Map() }
      this.accounts.set(accountId, state)
    }
    return state
  }

  /** Points spent and points requested by the rows landed so far, every account and stream of the run. */
  private measured() {
    let points = 0
    let requested = 0
    for (const a of this.accounts.values()) {
      for (const f of a.finished.values()) if (f.requested > 0) (points += f.points), (requested += f.requested)
      if (a.current !== undefined && a.current.counts.rows > 0) {
        points += a.current.counts.costPoints
        requested += a.current.counts.rows * a.current.requestedPointsPerRow
      }
    }
    return { points, requested }
  }

  /** The line's estimates for the account's stream now. */
  estimate(s: ProgressSnapshot, now: number): LineEstimate {
    const measured = this.measured()
    const pointsPerRow = expectedPointsPerRow(s.requestedPointsPerRow, measured)
    const plan = this.accounts.get(s.accountId)?.plan
    const at = plan?.streams.findIndex((p) => p.stream === s.stream) ?? -1
    if (plan === undefined || at < 0) return { pointsPerRow }
    const accountLeftMs = accountRemainingMs({
      streamMs: s.done === undefined ? streamLeftMs(s, now, pointsPerRow) : 0,
      later: plan.streams.slice(at + 1).map((p) => ({ rows: p.rows, pointsPerRow: expectedPointsPerRow(p.requestedPointsPerRow, measured) })),
      bucket: s.bucket
    })
    return accountLeftMs === undefined ? { pointsPerRow } : { pointsPerRow, accountLeftMs }
  }

  /** "run: 1/3 accounts done, 2 running  2 min 10 s left", for a run of more than one account. */
  runLine(now: number): string | undefined {
    if (this.run === undefined || this.run.accounts <= 1) return undefined
    const running = [...this.accounts.values()]
    const left = running.map((a) => (a.current === undefined ? undefined : this.estimate(a.current, now).accountLeftMs))
    const waiting = Math.max(0, this.run.accounts - this.ended - running.length)
    const taken =
      this.durations.length > 0
        ? this.durations
        : running.flatMap((a, i) => (left[i] === undefined ? [] : [now - a.startedAtMs + left[i]!]))
    const perAccountMs = taken.length > 0 ? taken.reduce((n, d) => n + d, 0) / taken.length : undefined
    const ms = runRemainingMs({ running: left, waiting, perAccountMs, concurrency: this.run.concurrency })
    const counts = `run: ${count(this.ended)}/${count(this.run.accounts)} accounts done, ${count(running.length)} running${waiting > 0 ? `, ${count(waiting)} waiting` : ""}`
    return ms === undefined ? counts : `${counts}  ${formatDuration(ms)} left`
  }
}
