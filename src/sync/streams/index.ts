import { clientsStream } from "./clients.js"
import { invoicesStream } from "./invoices.js"
import { jobsStream } from "./jobs.js"
import { productsStream } from "./products.js"
import { propertiesStream } from "./properties.js"
import { quotesStream } from "./quotes.js"
import { requestsStream } from "./requests.js"
import { type AnyStream, excluding } from "./Stream.js"
import { usersStream } from "./users.js"
import { visitsStream } from "./visits.js"

/** Every stream of the account, parents before what links to them (any order lands right: no foreign keys). */
export const definedStreams: ReadonlyArray<AnyStream> = [
  usersStream,
  productsStream,
  clientsStream,
  propertiesStream,
  requestsStream,
  quotesStream,
  jobsStream,
  visitsStream,
  invoicesStream
]

/**
 * The streams a run takes, in order. Until the emulator serves every collection (its rebuild is under way), the
 * connector syncs jobs alone, without the links, line items and custom fields the old emulator cannot serve.
 */
export const allStreams: ReadonlyArray<AnyStream> = [
  excluding(jobsStream, ["client", "property", "quote", "request", "salesperson", "lineItems", "customFields"])
]

export const streamNames = allStreams.map((s) => s.name)

/** The stream a run takes under that name (with the run's exclusions applied). */
export const streamNamed = (name: string): AnyStream => {
  const stream = allStreams.find((s) => s.name === name)
  if (stream === undefined) throw new Error(`no stream named "${name}"; the streams are ${streamNames.join(", ")}`)
  return stream
}
