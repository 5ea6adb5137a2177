import { describe, expect, it } from "@effect/vitest"
import { isoSeconds } from "../../../src/emulator/Ids.js"

/** What the service sends for an ISO8601DateTime: Date's ISO form at second precision. */
const expected = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")

describe("isoSeconds", () => {
  it.each([0, 1, 999, 86_399_999, 86_400_000, 1_700_000_000_123, -1000, Date.UTC(2024, 1, 29, 23, 59, 59, 500), 253_402_300_799_000])(
    "%d ms is the ISO form at second precision",
    (ms) => expect(isoSeconds(ms)).toBe(expected(ms))
  )

  it("stays right across many days, in any order (days are cached)", () => {
    // a deterministic walk over 30,000 days, back and forth, more days than the cache holds
    const wrong: Array<number> = []
    for (let i = 0; i < 60_000; i++) {
      const ms = ((i * 7919) % 30_000) * 86_400_000 + ((i * 104_729) % 86_400_000)
      if (isoSeconds(ms) !== expected(ms)) wrong.push(ms)
    }
    expect(wrong).toEqual([])
  })
})
