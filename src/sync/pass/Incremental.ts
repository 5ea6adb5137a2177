import { Option } from "effect"
import type { Variables } from "../model.js"

/** What the engine tells a strategy about a page it landed: enough to decide whether the pass is over. */
export interface PageSummary {
  /** The updatedAt of each node of the page, in milliseconds (service time). */
  readonly updatedAtMs: ReadonlyArray<number>
  readonly hasNextPage: boolean
}

/** How one incremental pass pages: its variables, and the page after which it stops early. */
export interface IncrementalPass {
  readonly variables: Variables
  /** True when `page` ends the pass although the connection goes on (the pass reached rows it already has). */
  readonly endsAfter: (page: PageSummary) => boolean
}

/**
 * How a stream finds what changed since its last pass: a value with behaviour. The engine calls `plan` and pages
 * with what it returns; it never interprets a strategy by name, so a new one is a new value here.
 */
export interface Incremental {
  /** What the pass reads (README, `status`). */
  readonly description: string
  /** What the pass cannot see, repaired by the stream's next full pass (and, under `serve`, by webhooks). */
  readonly misses: string
  /**
   * The pass that reads every row updated after `since` (the high-water mark minus the overlap). None: the stream
   * has no incremental access, and only full passes (on their own cadence) keep it current.
   */
  readonly plan: (since: Date) => Option.Option<IncrementalPass>
}

/**
 * The connection sorts newest-updated first but cannot filter by update time (jobs): page from the top and stop at
 * the first page whose rows are all older than `since`. A row edited while the pass pages moves to the top, behind
 * the pass, and the next pass picks it up (its updatedAt is newer than the mark, which never passes the pass's start).
 */
export const newestFirst = (variables: Variables): Incremental => ({
  description: "newest-updated first (sort UPDATED_AT descending), stopping at the first page older than the mark minus the overlap",
  misses: "deletions; a row whose updatedAt is older than the mark minus the overlap when it becomes visible (clock skew, backdated edits)",
  plan: (since) =>
    Option.some({
      variables,
      // a page with no row (every row of it left out by the service) says nothing about where the mark is
      endsAfter: (page) => page.updatedAtMs.length > 0 && page.updatedAtMs.every((t) => t < since.getTime())
    })
})

/**
 * The connection filters by update time: page through the rows updated after `since`, to the end. Sorted by update
 * time ascending where the connection can, so a row edited during the pass moves ahead of the cursor into the same
 * pass; otherwise it is read by the next pass (the mark never passes the pass's start).
 */
export const updatedSince = (variables: (sinceIso: string) => Variables, description = "rows with updatedAt after the mark minus the overlap (filter updatedAt)"): Incremental => ({
  description,
  misses: "deletions; a row whose updatedAt is older than the mark minus the overlap when it becomes visible (clock skew, backdated edits)",
  plan: (since) => Option.some({ variables: variables(since.toISOString()), endsAfter: () => false })
})

/** No incremental access: the stream is kept current by full passes on its own cadence. */
export const fullPassesOnly: Incremental = {
  description: "none: full passes on the stream's cadence",
  misses: "every change between two full passes",
  plan: () => Option.none()
}
