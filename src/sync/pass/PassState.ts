import type { PassProgress } from "../model.js"
import type { PageSummary } from "./Incremental.js"
import type { Page, PassKind, ReceivedNode } from "../model.js"
import type { PassToMake } from "./PassPlan.js"

/** Ids of a batch's last page kept in the checkpoint: what a resumed pass joins its first page on. */
export const anchorsKept = 20

/** What a pass carries from one batch to the next. */
export interface PassState {
  /** The newest updatedAt the pass landed so far (service time); undefined before any. */
  readonly passNewest: number | undefined
  /** The list moved under the pass, or a page could not be checked (it may hide a gap): its end lists the ids. */
  readonly shifted: boolean
}

/** A pass before its first batch: a resumed full pass starts from its checkpoint's `shifted`. */
export const passStarts = (shifted: boolean): PassState => ({ passNewest: undefined, shifted })

/** What the per-batch rules need to know of the pass and its stream. */
export interface PassRules {
  readonly kind: PassKind
  /** The stream's updatedAt of a node; undefined: the stream has none. */
  readonly updatedAt: ((node: ReceivedNode["node"]) => string) | undefined
  /** True when a page ends the pass although the list goes on (an incremental pass reached rows it already has). */
  readonly endsAfter: (page: PageSummary) => boolean
  /** An incremental pass reads what changed since this time (its mark less the overlap); undefined for a full pass. */
  readonly since: Date | undefined
}

/** The rules of the pass `decision` makes over a stream with (or without) updatedAt. */
export const passRules = (decision: PassToMake, updatedAt: PassRules["updatedAt"]): PassRules =>
  decision._tag === "Incremental"
    ? { kind: "incremental", updatedAt, endsAfter: decision.pass.endsAfter, since: decision.since }
    : { kind: "full", updatedAt, endsAfter: () => false, since: undefined }

/** What one batch does to its pass. */
export interface BatchStep {
  /** The pass once the batch landed. */
  readonly state: PassState
  /** The batch's pages up to the one that ends the pass (the pages after it are not landed). */
  readonly landing: ReadonlyArray<Page>
  /** Where the checkpoint moves with the batch. */
  readonly progress: PassProgress
  /** The batch ends the pass: a page said the list ends, or the strategy says the pass reached rows it has. */
  readonly finishes: boolean
  /** The pass reached the end of the list (not merely rows it already has). */
  readonly reachedEnd: boolean
  /**
   * How the pass ends after this batch: in the batch's own transaction (an incremental pass moves its mark), with the
   * end-of-pass checks and the sweep (a full pass that reached the end of the list), or not yet.
   */
  readonly ends: "with-batch" | "with-sweep" | undefined
  /**
   * An incremental pass: the ids of the landed records it finds changed (updated since `since`; the page that ends it
   * holds older ones too), whose rows in other streams are read again. None in a full pass, which leaves them to their
   * own streams' passes.
   */
  readonly changed: ReadonlyArray<string>
}

/** What the engine tells a strategy about a page: its new rows' updatedAt and whether the list goes on. */
export const pageSummary = (page: Page, updatedAt: PassRules["updatedAt"]): PageSummary => ({
  updatedAtMs: updatedAt === undefined ? [] : page.nodes.slice(page.newFrom).map((n) => Date.parse(updatedAt(n.node))),
  hasNextPage: page.mayHaveMore
})

/**
 * One batch of a pass (consecutive pages, at least one), folded into the pass: the pages that land (up to the one that
 * ends the pass: the list ends, or the strategy says so), the checkpoint they move (position and anchors of the last,
 * `shifted`, the high-water mark), and whether and how the pass ends.
 */
export const advance = (state: PassState, batch: ReadonlyArray<Page>, rules: PassRules): BatchStep => {
  const summaries = batch.map((page) => pageSummary(page, rules.updatedAt))
  const end = summaries.findIndex((summary) => !summary.hasNextPage || rules.endsAfter(summary))
  const landing = end < 0 ? batch : batch.slice(0, end + 1)
  const last = landing[landing.length - 1]!
  const batchNewest = newestOf(summaries.slice(0, landing.length).flatMap((s) => s.updatedAtMs))
  const passNewest = newestOf([...(state.passNewest === undefined ? [] : [state.passNewest]), ...(batchNewest === undefined ? [] : [batchNewest])])
  // a page that could not be checked may hide a gap: the pass's end lists the ids before any sweep
  const shifted = state.shifted || landing.some((page) => page.shifted || !page.checked)
  const highWater = batchHighWater(rules.kind, batchNewest, passNewest)
  const finishes = end >= 0
  const reachedEnd = finishes && !last.mayHaveMore
  const since = rules.since
  const changed =
    since === undefined
      ? []
      : landing
          .flatMap((page) => page.nodes.slice(page.newFrom))
          .filter((n) => rules.updatedAt === undefined || Date.parse(rules.updatedAt(n.node)) >= since.getTime())
          .map((n) => n.node.id)
  return {
    state: { passNewest, shifted },
    landing,
    progress: {
      kind: rules.kind,
      partition: last.partition,
      position: last.position,
      anchors: last.nodes.slice(-anchorsKept).map((n) => n.node.id),
      shifted,
      highWaterMark: highWater === undefined ? null : new Date(highWater).toISOString()
    },
    finishes,
    reachedEnd,
    ends: !finishes ? undefined : rules.kind === "incremental" ? "with-batch" : reachedEnd ? "with-sweep" : undefined,
    changed
  }
}

/**
 * The high-water mark a landed batch hands the checkpoint. A full pass moves the mark with every batch (its newest
 * updatedAt); an incremental pass moves it only when it ends, with the newest updatedAt of the whole pass. The
 * checkpoint caps either at the pass's start (Checkpoints, `passMark`), so rows edited behind the pass after it started
 * stay in reach of the next incremental pass.
 */
export const batchHighWater = (kind: PassKind, batchNewestMs: number | undefined, passNewestMs: number | undefined): number | undefined =>
  kind === "full" ? batchNewestMs : passNewestMs

/** The newest of a page's updatedAt values, or undefined for an empty page. */
export const newestOf = (updatedAtMs: ReadonlyArray<number>): number | undefined => {
  let newest: number | undefined
  for (const t of updatedAtMs) if (newest === undefined || t > newest) newest = t
  return newest
}
