import type { Place } from "./place.js"
import type { Variables } from "../model.js"
import type { ChildDefinition } from "../streams/Stream.js"

/** A place as the query's variables: `offset`, or `after` a cursor. */
export const placeVariables = (place: Place): Variables => (place._tag === "Offset" ? { offset: place.offset } : { after: place.after })

/** A page's variables: the partition's, its size and place, and each child connection's inner page. */
export const pageVariables = (partition: Variables, place: Place, first: number, inner: ReadonlyMap<ChildDefinition, number>): Variables => {
  const variables: Record<string, unknown> = { ...partition, first, ...placeVariables(place) }
  for (const [child, k] of inner) variables[child.firstVariable] = k
  return variables
}
