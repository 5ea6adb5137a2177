/** Where a page is asked: from a position of the order, or after the row of a cursor (null: from the start). */
export type Place = { readonly _tag: "Offset"; readonly offset: number } | { readonly _tag: "After"; readonly after: string | null }

export const atOffset = (offset: number): Place => ({ _tag: "Offset", offset })
export const afterCursor = (after: string | null): Place => ({ _tag: "After", after })

export const atStart = (place: Place) => (place._tag === "Offset" ? place.offset === 0 : place.after === null)

export const describePlace = (place: Place): string =>
  place._tag === "Offset" ? `offset ${place.offset}` : place.after === null ? "the start (no cursor)" : `after cursor ${JSON.stringify(place.after.slice(0, 40))}`
