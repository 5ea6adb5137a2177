import { isAscii } from "node:buffer"

/**
 * The largest string V8 keeps on its regular pages is 128 kB: 64k characters of two bytes, 128k of one. Below the
 * first the plain path makes no large object; above the second the Latin-1 text is one too, and nothing is saved.
 */
const twoByteRegularMax = 64 * 1024
const oneByteRegularMax = 128 * 1024 - 64

/** In UTF-8 bytes read as Latin-1: a lead byte of 0xC4 or more, the start of a character past U+00FF. */
const beyondLatin1 = /[\u00c4-\u00f4]/

/** A character a UTF-8 byte of 0x80 or more becomes when the bytes are read as Latin-1. */
const latin1High = /[\u0080-\u00ff]/

/** A string read as Latin-1 from UTF-8 bytes, as those bytes read as UTF-8 (invalid bytes as U+FFFD, as `toString("utf8")`). */
const asUtf8 = (s: string) => (latin1High.test(s) ? Buffer.from(s, "latin1").toString("utf8") : s)

const setOwn = (target: Record<string, unknown>, key: string, value: unknown) => {
  // "__proto__" is an own property in JSON.parse's output: an assignment would set the prototype instead
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}

/** Every string of JSON.parse's output (values and keys), read again as UTF-8; in place, an object rebuilt only where a key changes. */
const recoded = (value: unknown): unknown => {
  if (typeof value === "string") return asUtf8(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (typeof item === "string") value[i] = asUtf8(item)
      else if (typeof item === "object" && item !== null) {
        const read = recoded(item)
        if (read !== item) value[i] = read
      }
    }
    return value
  }
  if (typeof value !== "object" || value === null) return value
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  if (keys.some((k) => latin1High.test(k))) {
    const rebuilt: Record<string, unknown> = {}
    for (const key of keys) setOwn(rebuilt, asUtf8(key), recoded(record[key]))
    return rebuilt
  }
  for (const key of keys) {
    const field = record[key]
    if (typeof field === "string") {
      const read = asUtf8(field)
      if (read !== field) setOwn(record, key, read)
    } else if (typeof field === "object" && field !== null) {
      const read = recoded(field)
      if (read !== field) setOwn(record, key, read)
    }
  }
  return record
}

/**
 * `JSON.parse` of a UTF-8 body, the same value as `JSON.parse(bytes.toString("utf8"))`, without making the body one
 * string of two-byte characters. A body with a character past U+00FF (a dash, an emoji, most scripts) decodes to a
 * string of twice its length; past 64k characters V8 puts it in its large-object space, on pages of its own mapped
 * fresh for it and unmapped after: a page of jobs (90 kB) took 1 ms to decode on the bench's machine, 60 times an
 * ASCII one's, a third of the connector's CPU while landing (docs/performance.md). Read as Latin-1 instead, the text
 * is one byte a character; JSON's syntax is ASCII and a multi-byte UTF-8 sequence has no ASCII byte in it, so the
 * parse sees the same structure, and each string with a byte of 0x80 or more is then read again as UTF-8. A body with
 * a `\u` escape takes the plain path: an escaped character would be read again too.
 */
export const parseJsonBytes = (bytes: Buffer): unknown => {
  if (bytes.length <= twoByteRegularMax || bytes.length > oneByteRegularMax || isAscii(bytes)) return JSON.parse(bytes.toString("utf8"))
  const latin1 = bytes.toString("latin1")
  if (!beyondLatin1.test(latin1) || latin1.includes("\\u")) return JSON.parse(bytes.toString("utf8"))
  return recoded(JSON.parse(latin1))
}
