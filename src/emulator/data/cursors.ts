/**
 * The cursors a collection issues and reads back. `offset`: graphql-ruby's, the base64 of the row's 1-based position
 * in the list as it is now. `keyset`: the row's place in one order (the order's signature, its sort values and its
 * index), so a page after it starts right after that place even when rows before it were added or removed.
 */

export type CursorMode = "offset" | "keyset"

/** An `after` the collection cannot read (malformed, or issued for another order or mode). */
export class CursorRejected extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

/** Where a cursor read back points: a position of the list, or a row's place in an order. */
export type ReadCursor =
  | { readonly mode: "offset"; readonly position: number }
  | { readonly mode: "keyset"; readonly values: ReadonlyArray<number | string>; readonly index: number }

/** The cursor of the row at 0-based `rank`. */
export const offsetCursor = (rank: number): string => Buffer.from(String(rank + 1)).toString("base64")

export const keysetCursor = (signature: string, values: ReadonlyArray<number | string>, index: number): string =>
  Buffer.from(JSON.stringify({ o: signature, v: values, i: index })).toString("base64url")

const notIssued = (after: string) => new CursorRejected(`after: "${after.slice(0, 40)}" is not a cursor issued by this endpoint`)

/** The position an offset cursor names: the count of rows before the next page. */
export const readOffsetCursor = (after: string): number => {
  const text = Buffer.from(after, "base64").toString("utf8")
  if (!/^\d+$/.test(text)) throw notIssued(after)
  return Number(text)
}

/** `after` read in `mode`: a keyset cursor must have been issued for the order of `signature` (with `sortKeys` keys). */
export const readCursor = (after: string, mode: CursorMode, signature: string, sortKeys: number): ReadCursor => {
  if (mode === "offset") return { mode, position: readOffsetCursor(after) }
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(after, "base64url").toString("utf8"))
  } catch {
    throw notIssued(after)
  }
  const c = parsed as { o?: unknown; v?: unknown; i?: unknown }
  if (typeof c !== "object" || c === null || typeof c.i !== "number" || !Number.isSafeInteger(c.i) || !Array.isArray(c.v) || c.v.length !== sortKeys) throw notIssued(after)
  if (c.o !== signature) throw new CursorRejected(`after: the cursor was issued for sort ${String(c.o)}, not ${signature}`)
  return { mode, values: c.v as Array<number | string>, index: c.i }
}
