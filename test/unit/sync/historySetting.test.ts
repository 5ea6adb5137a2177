import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { HistoryConfig, historyTablesOf } from "../../../src/sync/history/HistorySetting.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"

const read = (value: string | undefined) =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(HistoryConfig(), ConfigProvider.fromMap(new Map(value === undefined ? [] : [["SYNC_HISTORY", value]]))))
  )

describe("SYNC_HISTORY", () => {
  it("off by default; names, or all", () => {
    expect(Either.getOrThrow(read(undefined))).toEqual([])
    expect(Either.getOrThrow(read("")).map((s) => s.name)).toEqual([])
    expect(Either.getOrThrow(read("invoices, jobs")).map((s) => s.name)).toEqual(["jobs", "invoices"])
    expect(Either.getOrThrow(read("all")).length).toBeGreaterThan(5)
  })

  it("an unknown stream is refused naming the key, the name and the streams there are", () => {
    const result = read("jobs,job")
    expect(Either.isLeft(result)).toBe(true)
    const message = String(Either.isLeft(result) ? result.left : "")
    expect(message).toContain("SYNC_HISTORY: no stream named `job` (the streams are ")
    expect(message).toContain("jobs, ")
  })

  it("a stream's history covers its line items", () => {
    expect(historyTablesOf(jobsStream)).toEqual(["jobs", "job_line_items"])
  })
})
