import * as fs from "node:fs"
import { serviceSchemaPath } from "../../src/api/serviceSchema.js"

/** The API version the connector pins by default, and a later one the tests move the pin to. */
export const pinnedVersion = "2025-01-20"
export const nextVersion = "2025-07-01"

/** `YYYY-MM-DD` of a time (UTC). */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

const edit = (sdl: string, from: string, to: string) => {
  if (sdl.split(from).length !== 2) throw new Error(`the vendored schema must hold ${JSON.stringify(from)} exactly once`)
  return sdl.replace(from, to)
}

/**
 * The schema of the next version: the vendored one with a field added to Job (`archivedAt`) and a value added to
 * JobStatusTypeEnum (`paused`): nothing the program sends breaks, and a query of `archivedAt` tells the versions apart.
 */
export const nextVersionSchema = (): string => {
  let sdl = fs.readFileSync(serviceSchemaPath, "utf8")
  sdl = edit(sdl, "type Job {\n", 'type Job {\n  "When the job was archived"\n  archivedAt: ISO8601DateTime\n')
  sdl = edit(sdl, "enum JobStatusTypeEnum {\n", "enum JobStatusTypeEnum {\n  paused\n")
  return sdl
}

/** A version whose schema breaks the program: a field the jobs stream reads (`title`) is gone. */
export const breakingSchema = (): string => edit(fs.readFileSync(serviceSchemaPath, "utf8"), '  "The scheduling information of the job"\n  title: String\n', "")
