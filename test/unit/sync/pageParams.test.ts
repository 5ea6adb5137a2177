import { describe, expect, it } from "@effect/vitest"
import { bytesMayBeUnstorable, pageJson, type PageRows } from "../../../src/sync/landing/pageParams.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"

/** What the text check says (the rule the bytes check must follow): NUL, or a UTF-16 surrogate, escaped. */
const textRule = /\\u0000|\\ud[89a-f]/i

describe("bytesMayBeUnstorable", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["plain JSON", JSON.stringify({ id: "1", title: "Fence repair" })],
    ["a NUL escape", JSON.stringify({ title: "a\u0000b" })],
    ["a lone high surrogate", JSON.stringify({ title: "a\ud800b" })],
    ["a lone low surrogate", JSON.stringify({ title: "\udc00" })],
    ["an upper-case surrogate escape", String.raw`{"t":"\uDBFF"}`],
    ["a surrogate escape of digit 9", String.raw`{"t":"\ud9ab"}`],
    ["a BMP escape that is no surrogate", String.raw`{"t":"\u00e9\ud7ff\u0001"}`],
    ["an escape cut at the end", String.raw`{"t":"\u00`],
    ["a backslash-u at the very end", String.raw`\u`],
    ["non-ASCII text as UTF-8", JSON.stringify({ title: "Café — 水道 🚰" })],
    ["many escapes, one surrogate last", String.raw`{"t":"\u0041\u0042\u0043\uD83D"}`]
  ]
  for (const [name, text] of cases) {
    it(`${name}: as the text rule says (${textRule.test(text)})`, () => {
      expect(bytesMayBeUnstorable(Buffer.from(text, "utf8"))).toBe(textRule.test(text))
    })
  }

  it("reads a view into a larger buffer only within its bounds", () => {
    const whole = Buffer.from(String.raw`{"a":"x"}\u0000`)
    expect(bytesMayBeUnstorable(whole.subarray(0, 9))).toBe(false)
    expect(bytesMayBeUnstorable(whole)).toBe(true)
  })
})

describe("pageJson: ids read more than once in a batch", () => {
  const pageOf = (...ids: ReadonlyArray<string>): PageRows => ({ nodes: ids.map((id) => ({ node: { id }, raw: { id } })), body: undefined })
  const repeats = (...pages: ReadonlyArray<PageRows>) => {
    const { repeats, earlierReads } = pageJson(jobsStream, pages)
    return { repeats, earlierReads }
  }

  it("none: every id once", () => {
    expect(repeats(pageOf("a", "b"), pageOf("c"))).toEqual({ repeats: "none", earlierReads: [] })
  })

  it("across pages: every read but the last of each id is named by its page (from 1) and id", () => {
    expect(repeats(pageOf("a", "b"), pageOf("b", "c"), pageOf("c", "b:1", "a"))).toEqual({
      repeats: "across",
      earlierReads: ["1:a", "1:b", "2:c"]
    })
  })

  it("within a page: left to the statement's sort, nothing named", () => {
    expect(repeats(pageOf("a"), pageOf("b", "c", "b"))).toEqual({ repeats: "within", earlierReads: [] })
  })
})
