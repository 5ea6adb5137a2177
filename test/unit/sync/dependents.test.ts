import { describe, expect, it } from "@effect/vitest"
import { dependencyPlan } from "../../../src/sync/pass/Dependents.js"
import { definedStreams, streamNamed } from "../../../src/sync/streams/index.js"
import { type AnyStream, type Dependency, define, excluding } from "../../../src/sync/streams/Stream.js"
import { visitsStream } from "../../../src/sync/streams/visits.js"

/** A stream of the catalogue with other dependencies (the plan reads nothing but names and dependencies). */
const withDependencies = (name: string, dependsOn: ReadonlyArray<Dependency>): AnyStream => ({ ...streamNamed(name), dependsOn })
const planOf = (changed: string, catalog: ReadonlyArray<AnyStream>) =>
  dependencyPlan(streamNamed(changed), catalog).map((s) => `${s.stream.name}.${s.column} <- ${s.on}`)

describe("what depends on a stream's records (dependsOn)", () => {
  it("a changed job's visits are read again; nothing else of the catalogue holds another stream's data", () => {
    expect(planOf("jobs", definedStreams)).toEqual(["visits.job_id <- jobs"])
    for (const stream of definedStreams.filter((s) => s.name !== "jobs")) expect(planOf(stream.name, definedStreams), stream.name).toEqual([])
  })

  it("every dependency of the catalogue names a stream of it, through a column of its own that links to that stream", () => {
    for (const stream of definedStreams) {
      for (const d of stream.dependsOn) {
        expect(definedStreams.map((s) => s.name), `${stream.name} dependsOn`).toContain(d.stream)
        expect(stream.columns.find((c) => c.column === d.column)?.link, `${stream.name}.${d.column}`).toBe(d.stream)
      }
    }
  })

  it("follows dependents of dependents, breadth first, each dependency once (a cycle ends)", () => {
    const catalog = [
      withDependencies("jobs", [{ stream: "invoices", column: "invoice_id" }]),
      withDependencies("visits", [{ stream: "jobs", column: "job_id" }, { stream: "invoices", column: "invoice_id" }]),
      withDependencies("invoices", [{ stream: "visits", column: "client_id" }]),
      withDependencies("clients", [])
    ]
    expect(planOf("jobs", catalog)).toEqual(["visits.job_id <- jobs", "invoices.client_id <- visits", "jobs.invoice_id <- invoices", "visits.invoice_id <- invoices"])
    expect(planOf("clients", catalog)).toEqual([])
  })

  it("a stream not in the catalogue is not read again", () => {
    expect(planOf("jobs", definedStreams.filter((s) => s.name !== "visits"))).toEqual([])
  })

  it("a dependency whose link is excluded (SYNC_EXCLUDE_FIELDS) is dropped: which rows hold the data is not known", () => {
    expect(excluding(visitsStream, ["job"]).dependsOn).toEqual([])
    expect(excluding(visitsStream, ["lineItems"]).dependsOn).toEqual([{ stream: "jobs", column: "job_id" }])
  })

  it("a dependency through a column that is not a link to that stream is refused when the stream is defined, naming it", () => {
    expect(() => define({ ...visitsStream.spec, dependsOn: [{ stream: "jobs", column: "client_id" }] })).toThrow(
      /stream visits: dependsOn jobs: client_id is not one of its columns linking to jobs \(its links: job_id -> jobs, client_id -> clients/
    )
    expect(() => define({ ...visitsStream.spec, dependsOn: [{ stream: "jobs", column: "title" }] })).toThrow(/title is not one of its columns linking to jobs/)
  })
})
