import type { Page } from "../data/Collection.js"
import { CursorRejected, offsetCursor, readOffsetCursor } from "../data/cursors.js"
import { FieldError, pageWindow } from "./collectionQuery.js"

/** A connection's answer: nodes made on demand, cursors, page info, total count. */
export class ConnectionValue {
  private made: ReadonlyArray<unknown> | undefined
  constructor(
    private readonly items: ReadonlyArray<number>,
    private readonly make: (item: number) => unknown,
    private readonly cursorOf: (item: number) => string,
    readonly pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null },
    readonly totalCount: () => number
  ) {}

  /** `keep` leaves nodes out after paging: `pageInfo` and `totalCount` stay those of the page as paged. */
  static of(page: Page, make: (index: number) => unknown, keep?: (index: number) => boolean): ConnectionValue {
    const head = page.indices[0]
    const last = page.indices[page.indices.length - 1]
    return new ConnectionValue(keep === undefined ? page.indices : page.indices.filter(keep), make, page.cursorOf, {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: head === undefined ? null : page.cursorOf(head),
      endCursor: last === undefined ? null : page.cursorOf(last)
    }, page.totalCount)
  }

  /** A connection over a list held in memory (line items, subscriptions): offset cursors. */
  static ofList(
    list: ReadonlyArray<unknown>,
    args: Record<string, unknown>,
    where: string,
    maxPageSize: number,
    keep?: (item: unknown) => boolean
  ): ConnectionValue {
    const window = pageWindow(args, where, maxPageSize)
    let start = window.offset ?? 0
    if (window.offset === undefined && window.after !== undefined) start = listPosition(window.after)
    const items = Array.from({ length: Math.max(0, Math.min(window.first, list.length - start)) }, (_, k) => start + k)
    return new ConnectionValue(keep === undefined ? items : items.filter((i) => keep(list[i])), (i) => list[i], offsetCursor, {
      hasNextPage: start + items.length < list.length,
      hasPreviousPage: start > 0 && list.length > 0,
      startCursor: items.length === 0 ? null : offsetCursor(items[0]!),
      endCursor: items.length === 0 ? null : offsetCursor(items[items.length - 1]!)
    }, () => list.length)
  }

  get nodes(): ReadonlyArray<unknown> {
    return (this.made ??= this.items.map(this.make))
  }

  get edges(): ReadonlyArray<{ cursor: string; node: unknown }> {
    const nodes = this.nodes
    return this.items.map((item, k) => ({ cursor: this.cursorOf(item), node: nodes[k] }))
  }

  get size(): number {
    return this.items.length
  }
}

/** A cursor the endpoint cannot read answers INVALID_CURSOR at the field. */
export const cursorError = (e: CursorRejected) => new FieldError(e.reason, "INVALID_CURSOR", { argument: "after" })

const listPosition = (after: string): number => {
  try {
    return readOffsetCursor(after)
  } catch (e) {
    if (e instanceof CursorRejected) throw cursorError(e)
    throw e
  }
}
