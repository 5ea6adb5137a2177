import { jobsStream } from "../../src/sync/streams/jobs.js"
import { type AnyStream, excluding } from "../../src/sync/streams/Stream.js"

/**
 * The jobs stream's fields beyond Job's own scalars (links, line items, custom fields). The jobs-pipeline tests and
 * benchmarks exclude them (SYNC_EXCLUDE_FIELDS) to measure the pager and landing alone, as they have from the start.
 */
export const jobLinkFields: ReadonlyArray<string> = ["client", "property", "quote", "request", "salesperson", "lineItems", "customFields"]

/** The settings that sync the jobs stream alone, without the fields above. */
export const jobsOnlySettings: Readonly<Record<string, string>> = {
  SYNC_STREAMS: "jobs",
  SYNC_EXCLUDE_FIELDS: jobLinkFields.map((f) => `jobs.${f}`).join(",")
}

/** The jobs stream as the settings above configure it. */
export const jobScalarsStream: AnyStream = excluding(jobsStream, jobLinkFields)
