import { describe, expect, it } from "@effect/vitest"
import { parseJsonBytes } from "../../../src/api/jsonBytes.js"

/** A page-like body of `nodes` nodes, each with `text` in its fields, padded to about `bytes` with ASCII. */
const page = (text: string, bytes = 100_000) => {
  const nodes = Array.from({ length: 150 }, (_, i) => ({
    id: `Z2lkOi8vSm9iLyR7aX0=${i}`,
    title: `Job ${i} ${text}`,
    client: { name: `${text} Ltd`, tags: [text, "plain", i] },
    lineItems: { nodes: [{ name: `${text}/${i}`, quantity: 2, unitPrice: 10.5 }] },
    done: i % 2 === 0,
    notes: null
  }))
  const body = { data: { jobs: { nodes, pageInfo: { hasNextPage: true, endCursor: "MTUw" } } }, extensions: { cost: { requestedQueryCost: 300 } } }
  const size = Buffer.byteLength(JSON.stringify(body))
  return Buffer.from(JSON.stringify({ ...body, filler: "x".repeat(Math.max(0, bytes - size - 20)) }))
}

const plain = (bytes: Buffer) => JSON.parse(bytes.toString("utf8")) as unknown

describe("parseJsonBytes: JSON.parse of a UTF-8 body, the value JSON.parse(bytes.toString('utf8')) gives", () => {
  it.each([
    ["ASCII", "plain text"],
    ["Latin-1 characters", "Zoë Café"],
    ["characters past U+00FF (a dash, quotes, a euro)", "A — “B” €5"],
    ["emoji (four-byte sequences, surrogate pairs)", "done 🚀👍🏽"],
    ["scripts", "日本語 Ελληνικά עברית"],
    ["every kind together", "é — 🚀 日本"]
  ])("%s, in a body the size of a page of jobs (64-128 kB)", (_, text) => {
    const bytes = page(text)
    expect(bytes.length).toBeGreaterThan(64 * 1024)
    expect(bytes.length).toBeLessThan(128 * 1024)
    expect(parseJsonBytes(bytes)).toStrictEqual(plain(bytes))
  })

  it.each([
    ["small (a few kB)", 4_000],
    ["large (past 128 kB)", 300_000]
  ])("a %s body with characters past U+00FF", (_, size) => {
    const bytes = page("A — 🚀", size)
    expect(parseJsonBytes(bytes)).toStrictEqual(plain(bytes))
  })

  it("keys past ASCII, a key named __proto__ (an own property, never the prototype) and top-level arrays", () => {
    const text = '{"naïve — key":{"🚀":"up — away","__proto__":"polluted? — no"},"__proto__":{"x":"é — y"},"list":[["— a",["🚀"]],{"ключ":"значение"}]'
    const bytes = Buffer.from(`${text},"filler":"${"x".repeat(80_000)}"}`)
    const parsed = parseJsonBytes(bytes) as Record<string, Record<string, unknown>>
    expect(parsed).toStrictEqual(plain(bytes))
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype)
    expect(Object.getPrototypeOf(parsed["naïve — key"])).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(parsed["naïve — key"], "__proto__")?.value).toBe("polluted? — no")
    expect(Object.getOwnPropertyDescriptor(parsed, "__proto__")?.value).toStrictEqual({ x: "é — y" })
    expect(Object.keys(parsed["naïve — key"]!)).toEqual(["🚀", "__proto__"])
  })

  it("\\u escapes beside raw UTF-8 (an escaped character is not read again)", () => {
    // JSON escapes in the body's text (JSON.stringify writes these characters raw): é, an em dash and a rocket escaped
    const bytes = Buffer.from(page("ESCAPED", 100_000).toString("utf8").replaceAll("ESCAPED", "\\u00e9 \\u2014 é — \\ud83d\\ude80 🚀"))
    const parsed = parseJsonBytes(bytes) as { data: { jobs: { nodes: Array<{ title: string }> } } }
    expect(parsed.data.jobs.nodes[0]!.title).toBe("Job 0 é — é — 🚀 🚀")
    expect(parsed).toStrictEqual(plain(bytes))
  })

  it("invalid UTF-8 inside strings is read as toString('utf8') reads it (U+FFFD), a sequence cut by the closing quote included", () => {
    const head = Buffer.from('{"a":"x — ')
    const cut = Buffer.from([0xe2, 0x82]) // the first two bytes of a three-byte character, then the quote
    const stray = Buffer.from([0xff, 0xc0, 0x80, 0xed, 0xa0, 0x80]) // never valid: 0xFF, an overlong NUL, a surrogate
    const bytes = Buffer.concat([head, cut, Buffer.from('","b":"'), stray, Buffer.from(` 🚀","filler":"${"x".repeat(80_000)}"}`)])
    expect(parseJsonBytes(bytes)).toStrictEqual(plain(bytes))
    expect((parseJsonBytes(bytes) as { a: string }).a).toBe("x — \ufffd")
  })

  it("a body that is not JSON fails as JSON.parse does (SyntaxError), whichever way it was read", () => {
    const bytes = Buffer.from(`{"a":"— 🚀", "filler":"${"x".repeat(80_000)}" — }`)
    expect(() => plain(bytes)).toThrow(SyntaxError)
    expect(() => parseJsonBytes(bytes)).toThrow(SyntaxError)
  })
})
