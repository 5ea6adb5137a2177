import type { AnyStream } from "./Stream.js"
import { jobsStream } from "./jobs.js"

/** Every stream the connector syncs, in the order a run takes them. */
export const allStreams: ReadonlyArray<AnyStream> = [jobsStream]

export const streamNames = allStreams.map((s) => s.name)
