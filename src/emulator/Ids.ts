/**
 * EncodedId values as the service shows them: base64 of a global id path, e.g. base64("gid://service/Job/42").
 * Numbers inside are the emulator's internal ids, so an id decodes back to its record without a lookup table.
 */

/** The type name inside a global id: a node type (`Job`, `Client`, ...), `Account` or `Application`. */
export type IdKind = string

export const encodeId = (kind: IdKind, n: number): string => Buffer.from(`gid://service/${kind}/${n}`).toString("base64")

/** The number inside an EncodedId of `kind`, or undefined when `id` is not one. */
export const decodeId = (kind: IdKind, id: string): number | undefined => {
  const text = Buffer.from(id, "base64").toString("utf8")
  const match = /^gid:\/\/service\/([A-Za-z]+)\/(\d+)$/.exec(text)
  if (!match || match[1] !== kind) return undefined
  const n = Number(match[2])
  return Number.isSafeInteger(n) ? n : undefined
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`)
/** `YYYY-MM-DDT` of a day (days since 1970): a job's date fields fall on many days, a few thousand at most. */
const dayPrefixes = new Map<number, string>()
const dayPrefix = (day: number): string => {
  let prefix = dayPrefixes.get(day)
  if (prefix === undefined) {
    if (dayPrefixes.size >= 10_000) dayPrefixes.clear()
    dayPrefixes.set(day, (prefix = new Date(day * 86_400_000).toISOString().slice(0, 11)))
  }
  return prefix
}

/** ISO 8601 with second precision and a `Z`, the form the service uses for ISO8601DateTime. */
export const isoSeconds = (ms: number): string => {
  // hot path (every date field of every served job): format each day once, the time of day by hand
  const seconds = Math.floor(ms / 1000)
  const day = Math.floor(seconds / 86_400)
  const rest = seconds - day * 86_400
  return `${dayPrefix(day)}${pad2(Math.floor(rest / 3600))}:${pad2(Math.floor(rest / 60) % 60)}:${pad2(rest % 60)}Z`
}
