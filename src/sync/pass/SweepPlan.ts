/**
 * The deletion rule at the end of a full pass, as pure decisions; PassEnd gathers the facts and applies them.
 *
 * A candidate is a live row the pass did not see. It is marked deleted only when proven absent at the service, by
 * what the stream's connection allows (`Proof`):
 * - `ById`: the connection filters by id. The candidates are asked for by id: those returned are alive (landed);
 *   of the rest, those the service does not count under the same filter are gone, those it counts it withholds from
 *   the app (kept). A listing, when made, only names the candidates: no page of it can cost the stream its deletions.
 * - `Near`: no id filter, but a filter on a value the row keeps for life (its creation time, its client). A listing
 *   of the connection's ids that is complete (every page checked, the count no more than the positions paged) and
 *   lists every row the service counts proves the candidates it did not list gone, at once. Otherwise each candidate
 *   is asked for by its stored value (a narrow listing): returned, it is alive; not returned while the service counts
 *   no more rows there than it returned, it is gone; else a withheld record shares its value and it is kept, counted.
 * - `ListingOnly`: neither (the value's column is excluded). Only a complete listing that lists all the service counts
 *   proves candidates gone; otherwise they are kept, counted and shown.
 * A kept row stays live: `deleted_at` says the service deleted the record, which is not known.
 */

/** How the stream's candidates are proven absent (see the module's comment). */
export type Proof = "ById" | "Near" | "ListingOnly"

/** The pass, as its end finds it. */
export interface PassFacts {
  /** A page of the pass did not join where it would have, or could not be checked (a gap may hide there). */
  readonly shifted: boolean
  /** What the service counts in the connection now, and the distinct rows the pass saw. */
  readonly total: number
  readonly seen: number
}

/**
 * Whether the connection's ids are listed before the candidates are read: when the list moved under the pass or the
 * count differs from what it saw. The listing replaces what the pass saw, so a row the pass landed and the service
 * deleted before the listing reached it becomes a candidate too. Whatever the proof, a listing decides nothing on its
 * own unless `listingVerdict` finds it decisive; where candidates are asked for by id, it only names them. With neither,
 * candidates are rare (as many created as deleted): `candidateStep` asks for a listing when it meets one without an
 * id filter.
 */
export const listingNeeded = (facts: PassFacts): boolean => facts.shifted || facts.total !== facts.seen

/** A listing of the connection's ids, as paged. */
export interface ListingFacts {
  /** Pages that could not be checked against the page before (a gap may hide between them). */
  readonly uncheckedPages: number
  /** The service's count after the listing, the positions it paged before saying the list ends, the ids it listed. */
  readonly total: number
  readonly positions: number
  readonly listed: number
}

export interface ListingVerdict {
  /** The listing proves every row it did not list absent (complete, and nothing counted beyond what it listed). */
  readonly decisive: boolean
  /** Why it does not, when it does not. */
  readonly why: string | undefined
  /** Rows the service counts beyond the ids it listed: records it withholds from the app. */
  readonly withheld: number
}

export const listingVerdict = (listing: ListingFacts): ListingVerdict => {
  const withheld = Math.max(0, listing.total - listing.listed)
  const why =
    listing.uncheckedPages > 0
      ? `${listing.uncheckedPages} page(s) of the listing could not be checked against the page before (too few rows around them)`
      : listing.total > listing.positions
        ? `the service said the list ends after ${listing.positions} positions but counts ${listing.total} rows`
        : withheld > 0
          ? `the service counts ${withheld} row(s) it did not list (it withholds them from this app)`
          : undefined
  return { decisive: why === undefined, why, withheld }
}

/** A live row the pass did not see, with its stored value of the stream's `Near` column (null: none stored). */
export interface Candidate {
  readonly id: string
  readonly near: string | null
}

/** Why a candidate stays live. */
export type KeepReason =
  /** The service counts it under a filter of its id but does not return it: it exists, withheld from this app. */
  | "withheld"
  /** A record the service withholds shares its `Near` value: it may be that one, or gone. */
  | "sharesWithWithheld"
  /** No `Near` value stored and no decisive listing. */
  | "noValue"
  /** Only a listing can prove it gone, and the listing was not decisive. */
  | "listingNotDecisive"

export interface Kept {
  readonly id: string
  readonly reason: KeepReason
}

/** What to do with a round of candidates. */
export type CandidateStep =
  /** List the connection's ids first (and read the candidates again: the listing replaces what the pass saw). */
  | { readonly _tag: "ListFirst" }
  | {
      readonly _tag: "Decide"
      /** Proven absent: marked deleted by the sweep. */
      readonly mark: ReadonlyArray<string>
      /** Asked for by id. */
      readonly byId: ReadonlyArray<string>
      /** Asked for by their stored value: one narrow listing per value. */
      readonly byValue: ReadonlyMap<string, ReadonlyArray<string>>
      readonly keep: ReadonlyArray<Kept>
    }

/** A round of candidates, given the stream's proof and the listing made (undefined: none). */
export const candidateStep = (proof: Proof, candidates: ReadonlyArray<Candidate>, listing: ListingVerdict | undefined): CandidateStep => {
  const none = { mark: [], byId: [], byValue: new Map<string, ReadonlyArray<string>>(), keep: [] }
  if (proof === "ById") return { _tag: "Decide", ...none, byId: candidates.map((c) => c.id) }
  if (listing === undefined) return { _tag: "ListFirst" }
  if (listing.decisive) return { _tag: "Decide", ...none, mark: candidates.map((c) => c.id) }
  if (proof === "ListingOnly") return { _tag: "Decide", ...none, keep: candidates.map((c) => ({ id: c.id, reason: "listingNotDecisive" })) }
  const byValue = new Map<string, Array<string>>()
  const keep: Array<Kept> = []
  for (const c of candidates) {
    if (c.near === null) keep.push({ id: c.id, reason: "noValue" })
    else byValue.set(c.near, [...(byValue.get(c.near) ?? []), c.id])
  }
  return { _tag: "Decide", ...none, byValue, keep }
}

/** What a question about some candidates (by id, or by one stored value) found. */
export interface Answer {
  /** The candidates asked about. */
  readonly asked: ReadonlyArray<string>
  /** Ids the service returned (for a narrow listing: every row under the value, candidates or not). */
  readonly returned: ReadonlyArray<string>
  /** What the service counts under the same filter (undefined: not counted yet). */
  readonly counted: number | undefined
}

export type AnswerVerdict =
  /** Count the candidates not returned, under a filter of just them (or of the same value), before deciding them. */
  | { readonly _tag: "Count"; readonly alive: ReadonlyArray<string>; readonly ids: ReadonlyArray<string> }
  /** The count covers some of the candidates and not all: count each half on its own. */
  | { readonly _tag: "Split"; readonly alive: ReadonlyArray<string>; readonly halves: readonly [ReadonlyArray<string>, ReadonlyArray<string>] }
  | { readonly _tag: "Decided"; readonly alive: ReadonlyArray<string>; readonly gone: ReadonlyArray<string>; readonly keep: ReadonlyArray<Kept> }

const partition = (answer: Answer) => {
  const returned = new Set(answer.returned)
  return { returned, alive: answer.asked.filter((id) => returned.has(id)), missing: answer.asked.filter((id) => !returned.has(id)) }
}

/**
 * The candidates asked for by id (`counted`: what the service counts under a filter of exactly `asked`). Those returned
 * are alive. Of the rest, the count beyond the returned ones is how many the service has and withholds: none, they
 * are all gone; as many as are missing, they are all withheld; in between, each half is counted on its own, down to one.
 */
export const byIdVerdict = (answer: Answer): AnswerVerdict => {
  const { alive, missing } = partition(answer)
  if (missing.length === 0) return { _tag: "Decided", alive, gone: [], keep: [] }
  if (answer.counted === undefined) return { _tag: "Count", alive, ids: missing }
  const withheld = answer.counted - alive.length
  if (withheld <= 0) return { _tag: "Decided", alive, gone: missing, keep: [] }
  if (withheld >= missing.length) return { _tag: "Decided", alive, gone: [], keep: missing.map((id) => ({ id, reason: "withheld" })) }
  const half = Math.ceil(missing.length / 2)
  return { _tag: "Split", alive, halves: [missing.slice(0, half), missing.slice(half)] }
}

/**
 * The candidates that share one stored value, asked for by a narrow listing under it (`returned`: every row it gave,
 * candidates or not; `counted`: what the service counts under the value). Those returned are alive; the rest are gone
 * when the service counts no more rows under the value than it returned, else a withheld record shares the value and
 * they are kept.
 */
export const byValueVerdict = (answer: Answer): AnswerVerdict => {
  const { returned, alive, missing } = partition(answer)
  if (missing.length === 0) return { _tag: "Decided", alive, gone: [], keep: [] }
  if (answer.counted === undefined) return { _tag: "Count", alive, ids: missing }
  return answer.counted <= returned.size
    ? { _tag: "Decided", alive, gone: missing, keep: [] }
    : { _tag: "Decided", alive, gone: [], keep: missing.map((id) => ({ id, reason: "sharesWithWithheld" })) }
}

/** What the end of the pass records about deletions: the rows kept undecided (not those proven withheld), in words. */
export const undecidedNote = (kept: ReadonlyArray<Kept>, listingWhy: string | undefined, column: string | undefined): string | null => {
  const counts = new Map<KeepReason, number>()
  for (const k of kept) if (k.reason !== "withheld") counts.set(k.reason, (counts.get(k.reason) ?? 0) + 1)
  if (counts.size === 0) return null
  const words: Record<Exclude<KeepReason, "withheld">, string> = {
    sharesWithWithheld: `withheld from this app or gone (the service counts a record it does not return with the same ${column ?? "value"})`,
    noValue: `no ${column ?? "value"} stored to ask for them by`,
    listingNotDecisive: `the listing proves nothing: ${listingWhy ?? "incomplete"}`
  }
  const parts = [...counts].map(([reason, n]) => `${n} row(s): ${words[reason as Exclude<KeepReason, "withheld">]}`)
  return `not proven gone, kept live: ${parts.join("; ")}`
}
