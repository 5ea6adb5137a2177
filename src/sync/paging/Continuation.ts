import type { Answer, Verdict } from "./answer.js"
import { afterCursor, atOffset, atStart, describePlace, type Place } from "./place.js"
import type { RecentIds } from "./RecentIds.js"

/**
 * How a pass pages exactly while the list moves under it, and while the service leaves nodes out of its pages.
 *
 * The service's cursors are opaque and may be offsets, so a deletion behind the pass shifts every later row one place
 * back and a naive pager skips a row. A pass pages by position instead: it counts the positions the service paged
 * (`first` per page, whatever the page held: a service that authorizes each node leaves some out after paging, and a
 * page shorter than `first` is not the end), and each page starts a little before where the last one ended. The page
 * must contain a row the pass already landed (its "join"): every row after the last landed one is new, and no row can
 * have been skipped (rows that keep existing keep their relative order). A page that does not join is asked again:
 * - from the lowest position the last landed row can be at, when the rows at the end of the last page may only have
 *   been left out (not moved): that page holds the row if nothing moved;
 * - further back, a page, two, four..., when the list moved behind the pass;
 * - or taken as it is, unchecked, when the pages around it hold too few rows to check anything (a long run of rows
 *   the service leaves out): the pass then counts as moved, and its deletions are checked by a listing.
 * The end of the list is the service's `hasNextPage: false`.
 *
 * Where the service ignores `offset` (a page asked anywhere is the first one), the walk pages after cursors instead:
 * each page asked after the cursor of the row before the last one landed, joined the same way.
 */

/** How many rows before the end of the landed rows a page starts, when the last page held every row it paged. */
export const overlapRows = 1

/** The same, when the last page held fewer rows than it paged (rows left out): more rows for the join to find. */
export const overlapRowsWithGaps = 4

/** Pages a pass may take in a row, past where it had been, that bring no new row while the service says more follow. */
export const barrenPagesLimit = 50

/**
 * How many times a page is asked again to find its join. Steps back double, and the last one goes to the start of
 * the list (which always joins): a pass whose list moved far is read again from the start rather than fail.
 */
export const reaskLimit = 10

const moved = "no row of the page was landed before (the list moved behind the pass)"

/** Cursors a walk keeps to ask again further back (paging after cursors). */
const trailCapacity = 2000

/** Ids of pages asked at the start a walk keeps, to tell a page further on that repeats them. */
const startSeenCapacity = 1000

/** How many of the start page's first ids a page must repeat to be taken for the start page. */
const startIdsCompared = 3

/** How the current page was last asked. */
type Ask = "next" | "reanchor" | "back"

/**
 * One partition of a pass: where each page is asked, whether it joins, where to ask again. `covered`: the positions of
 * the order the pass has paged (a resumed pass starts from its checkpoint's, not knowing where its last row was).
 */
export class Walk {
  private covered: number
  /** The lowest position the last landed row can be at (rows before it in its page may have been left out). */
  private lowest: number | undefined
  /** The last page held fewer rows than it paged. */
  private gaps = false
  /** The first ids of the list, from the last page asked at its start; and every id such pages gave (bounded). */
  private startIds: ReadonlyArray<string> | undefined
  private startSeen = new Set<string>()
  /** Paging after cursors: the cursors of the rows landed, in the order received (bounded), to ask again further back. */
  private trail: Array<string> = []
  /** Paging after cursors: where the next page is asked, and whether it starts on a row already landed. */
  private nextAfter: string | null = null
  private overlapping = false
  private barren = 0
  /** Pages in a row with no new row, wherever they were. */
  private stale = 0
  /** The furthest position the walk has paged to. */
  private frontier: number
  // the page being asked: where first, how last, how many steps back
  private nextPlace: Place = atOffset(0)
  private ask: Ask = "next"
  private stepsBack = 0

  constructor(
    private readonly recent: RecentIds,
    position: number,
    private paging: "offset" | "after" = "offset"
  ) {
    this.covered = position
    this.frontier = position
  }

  /** Positions of the order paged so far (what a checkpoint keeps). */
  get position(): number {
    return this.covered
  }

  get pagingBy(): "offset" | "after" {
    return this.paging
  }

  /** Where the next page of `first` rows is asked first. */
  place(first: number): Place {
    this.ask = "next"
    this.stepsBack = 0
    if (this.paging === "after") this.nextPlace = afterCursor(this.nextAfter)
    else this.nextPlace = atOffset(Math.max(0, this.covered - this.overlap(first)))
    return this.nextPlace
  }

  /**
   * Where the page after the one asked at `place` (paging by offset, asked as the next page) will be asked if it comes
   * back full and joins: what a page fetched ahead is asked at. Undefined when that cannot be known before the answer.
   */
  nextIfFull(place: Place, first: number): Place | undefined {
    if (place._tag !== "Offset" || this.paging !== "offset" || this.ask !== "next") return undefined
    // a full page leaves no gaps: the overlap `place` would take after it
    return atOffset(Math.max(0, place.offset + first - this.overlap(first, false)))
  }

  private overlap(first: number, gaps = this.gaps): number {
    // a larger overlap where rows were left out, but never more than an eighth of the page (small pages must advance)
    return Math.max(0, Math.min(first - 1, gaps ? Math.max(overlapRows, Math.min(overlapRowsWithGaps, Math.floor(first / 8))) : overlapRows))
  }

  /** Whether the page asked at `answer.place` joins the rows landed, or where to ask it again. */
  judge(answer: Answer): Verdict {
    const { place, first, ids } = answer
    const startPage = atStart(place)
    // the next page, asked a page or more further on, holding rows given at the start: the service ignores `offset`
    if (place._tag === "Offset" && this.ask === "next" && place.offset >= first && this.fromStart(ids)) {
      return { _tag: "IgnoresOffset", detail: `the service answered offset ${place.offset} with the rows of offset 0: it ignores \`offset\`` }
    }
    if (place._tag === "After" && !startPage && this.repeatsStart(ids)) {
      return { _tag: "CannotPage", detail: `the service answered ${describePlace(place)} with the rows at the start of the list: it ignores \`after\` as well as \`offset\`` }
    }
    let at = -1
    for (let j = ids.length - 1; j >= 0; j--) {
      if (this.recent.has(ids[j]!)) {
        at = j
        break
      }
    }
    const leading = at >= 0 && ids.slice(0, at + 1).every((id) => this.recent.has(id))
    if (startPage) return { _tag: "Joined", newFrom: at + 1, shifted: this.recent.size > 0 && (this.ask !== "next" || this.paging === "after" || !leading), checked: true }
    // landed rows lead the page; one after a new row, or a page asked further back: the list moved
    if (at >= 0) return { _tag: "Joined", newFrom: at + 1, shifted: this.ask === "back" || !leading, checked: true }
    return this.notJoined(answer)
  }

  private notJoined({ place, first, ids, hasNextPage }: Answer): Verdict {
    if (place._tag === "After") {
      // asked after the last row landed (the page before held one row at most), or every row paged was left out and
      // more follow: nothing to join on, so it is taken as it is, unchecked
      if (this.ask === "next" && (!this.overlapping || (ids.length === 0 && hasNextPage))) return { _tag: "Joined", newFrom: 0, shifted: true, checked: false }
      return { _tag: "AskAgain", place: this.back(first), why: moved }
    }
    // nothing landed yet to join on (every row so far left out), or pages too small to overlap: taken as they are
    if (this.overlap(first) === 0 || this.recent.size === 0) return { _tag: "Joined", newFrom: 0, shifted: true, checked: false }
    if (this.ask === "next" && this.lowest !== undefined && this.lowest < place.offset) {
      // the last landed row may be further back only because rows after it were left out: ask where it must be
      if (this.lowest + first - this.covered >= Math.max(1, Math.floor(first / 4))) {
        this.ask = "reanchor"
        return { _tag: "AskAgain", place: atOffset(this.lowest), why: `the last rows of the page before were left out; asking from ${this.lowest}, where its last row can be` }
      }
      // too few rows around to check anything: taken as it is
      return { _tag: "Joined", newFrom: 0, shifted: true, checked: false }
    }
    return { _tag: "AskAgain", place: this.back(first), why: moved }
  }

  /** Where the page is asked again further back: a page, two, four ... before where it was first asked; at last the start. */
  back(first: number): Place {
    const step = this.stepsBack++
    this.ask = "back"
    const last = step >= reaskLimit - 2
    if (this.nextPlace._tag === "After") return afterCursor(last ? null : (this.trail[this.trail.length - 1 - 2 ** Math.min(step + 1, 30)] ?? null))
    return atOffset(last ? 0 : Math.max(0, this.nextPlace.offset - first * 2 ** Math.min(step, 20)))
  }

  /** At least half the page's rows were once given at the start of the list (a page asked from far further on). */
  private fromStart(ids: ReadonlyArray<string>): boolean {
    if (ids.length === 0) return false
    let seen = 0
    for (const id of ids) if (this.startSeen.has(id)) seen++
    return seen * 2 >= ids.length
  }

  private repeatsStart(ids: ReadonlyArray<string>): boolean {
    const start = this.startIds
    if (start === undefined || start.length === 0) return false
    const n = Math.min(startIdsCompared, start.length)
    if (ids.length < n) return false
    for (let i = 0; i < n; i++) if (ids[i] !== start[i]) return false
    return true
  }

  /** The page is landed (joined, or taken unchecked): the walk moves past it. */
  landed(answer: Answer): void {
    const { place, first, ids } = answer
    if (atStart(place) && ids.length > 0) {
      this.startIds = ids.slice(0, startIdsCompared)
      for (const id of ids) this.startSeen.add(id)
      if (this.startSeen.size > startSeenCapacity) this.startSeen = new Set([...this.startSeen].slice(-startSeenCapacity))
    }
    const someNew = ids.some((id) => !this.recent.has(id))
    this.recent.add(ids)
    if (place._tag === "Offset") {
      this.covered = place.offset + first
      this.gaps = ids.length < first && answer.hasNextPage
      if (ids.length > 0) this.lowest = place.offset + ids.length - 1
    } else {
      this.covered += first
      const cursors = answer.cursors ?? []
      this.trail.push(...cursors)
      if (this.trail.length > trailCapacity) this.trail = this.trail.slice(-trailCapacity)
      // the next page after the row before this page's last one: it starts on a landed row
      this.overlapping = cursors.length >= 2
      this.nextAfter = this.overlapping ? cursors[cursors.length - 2]! : (answer.endCursor ?? cursors[0] ?? this.nextAfter)
    }
    // pages read again (after a step back to the start) are barren only past where the walk had been; below it, only
    // more of them in a row than it takes to read up to there twice
    const beyond = this.covered > this.frontier
    this.barren = !answer.hasNextPage || someNew ? 0 : beyond ? this.barren + 1 : this.barren
    this.stale = !answer.hasNextPage || someNew ? 0 : this.stale + 1
    this.frontier = Math.max(this.frontier, this.covered)
    if (this.stale > barrenPagesLimit + 2 * Math.ceil(this.frontier / Math.max(1, first))) this.barren = Math.max(this.barren, barrenPagesLimit + 1)
  }

  /** Pages in a row, past where the walk had been, that brought no new row while the service said more follow. */
  get barrenPages(): number {
    return this.barren
  }

  /** The service ignores `offset`: page after cursors from the start (its pages join on the rows already landed). */
  useCursors(): void {
    this.paging = "after"
    this.nextAfter = null
    this.overlapping = false
    this.covered = 0
  }
}
