import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either } from "effect"
import { estimateQueryCost } from "../../../src/api/costEstimate.js"
import { definedStreams } from "../../../src/sync/streams/index.js"
import { fullPassEveryKey, StreamSelectionConfig } from "../../../src/sync/StreamSelection.js"
import { formatConfigError } from "../../../src/config.js"
import { fullPassCadence, selectStreams, SyncSettingsConfig } from "../../../src/sync/SyncSettings.js"

const load = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(StreamSelectionConfig(definedStreams), ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )
const loaded = (env: Record<string, string>) => {
  const result = load(env)
  if (Either.isLeft(result)) throw new Error(formatConfigError(result.left))
  return result.right
}
const failure = (env: Record<string, string>) => {
  const result = load(env)
  if (Either.isRight(result)) throw new Error("expected a configuration error")
  return formatConfigError(result.left)
}
const named = (streams: ReadonlyArray<{ readonly name: string }>, name: string) => {
  const stream = streams.find((s) => s.name === name)
  if (stream === undefined) throw new Error(`no ${name}`)
  return stream as (typeof definedStreams)[number]
}
const perRow = (stream: (typeof definedStreams)[number]) =>
  estimateQueryCost(stream.document, { first: 10, offset: 0, ...Object.fromEntries(stream.children.map((c) => [c.firstVariable, c.innerPage])) }) / 10

describe("stream selection (SYNC_STREAMS, SYNC_EXCLUDE_FIELDS, SYNC_FULL_PASS_EVERY_<STREAM>)", () => {
  it("takes every stream, whole, by default", () => {
    const selection = loaded({})
    expect(selection.defaults.map((s) => s.name)).toEqual(definedStreams.map((s) => s.name))
    expect(selection.catalog.every((s) => s.columns.every((c) => c.selected))).toBe(true)
    expect(selection.fullPassEvery.size).toBe(0)
  })

  it("SYNC_STREAMS chooses the streams of a run; an unknown name is refused, naming it and the streams there are", () => {
    expect(loaded({ SYNC_STREAMS: "jobs, clients" }).defaults.map((s) => s.name)).toEqual(["clients", "jobs"])
    const message = failure({ SYNC_STREAMS: "jobs,jbos" })
    expect(message).toContain("SYNC_STREAMS is invalid (in .env or the environment): no stream named `jbos`")
    expect(message).toContain("clients")
  })

  it("an excluded field is not requested: its column stays, unselected, and a row costs less", () => {
    const selection = loaded({ SYNC_EXCLUDE_FIELDS: "jobs.instructions,jobs.lineItems,invoices.customFields" })
    const jobs = named(selection.catalog, "jobs")
    const whole = named(definedStreams, "jobs")
    expect(jobs.columns.find((c) => c.column === "instructions")?.selected).toBe(false)
    expect(jobs.columns.map((c) => c.column)).toEqual(whole.columns.map((c) => c.column))
    const text = jobs.document.loc?.source.body ?? ""
    expect(text).not.toMatch(/\binstructions\b/)
    expect(text).not.toMatch(/\blineItems\b/)
    // the line items follow their parent's choice: no child table is written
    expect(jobs.children).toEqual([])
    expect(named(selection.catalog, "invoices").customFields).toBeUndefined()
    expect(perRow(jobs)).toBeLessThan(perRow(whole))
    // the other streams are whole
    expect(named(selection.catalog, "clients").columns.every((c) => c.selected)).toBe(true)
  })

  it("a bad exclusion names the entry, and for an unknown field the stream's fields", () => {
    expect(failure({ SYNC_EXCLUDE_FIELDS: "jobz.title" })).toContain("SYNC_EXCLUDE_FIELDS is invalid (in .env or the environment): `jobz.title` names no stream")
    expect(failure({ SYNC_EXCLUDE_FIELDS: "jobs" })).toContain("expected <stream>.<field>")
    const message = failure({ SYNC_EXCLUDE_FIELDS: "jobs.titel" })
    expect(message).toContain("cannot exclude `titel`")
    expect(message).toContain("title")
    expect(failure({ SYNC_EXCLUDE_FIELDS: "jobs.id" })).toContain("cannot exclude `id`")
  })

  it("a stream's own full-pass cadence wins over its definition's and SYNC_FULL_PASS_EVERY", () => {
    expect(fullPassEveryKey("jobs")).toBe("SYNC_FULL_PASS_EVERY_JOBS")
    const settings = Effect.runSync(
      Effect.withConfigProvider(
        SyncSettingsConfig,
        ConfigProvider.fromMap(new Map([["SYNC_FULL_PASS_EVERY", "2 days"], [fullPassEveryKey("jobs"), "6 hours"]]))
      )
    )
    const jobs = settings.streams.catalog.find((s) => s.name === "jobs")!
    expect(Duration.toHours(fullPassCadence(settings, jobs))).toBe(6)
    const others = settings.streams.catalog.filter((s) => s.name !== "jobs" && s.fullPassEvery === undefined)
    for (const s of others) expect(Duration.toHours(fullPassCadence(settings, s))).toBe(48)
    // --stream picks from every stream, SYNC_STREAMS or not
    expect(selectStreams(settings, ["jobs"]).map((s) => s.name)).toEqual(["jobs"])
  })
})
