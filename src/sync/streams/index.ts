import { clientsStream } from "./clients.js"
import { invoicesStream } from "./invoices.js"
import { jobsStream } from "./jobs.js"
import { productsStream } from "./products.js"
import { propertiesStream } from "./properties.js"
import { quotesStream } from "./quotes.js"
import { requestsStream } from "./requests.js"
import type { AnyStream } from "./Stream.js"
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

/** The streams a run takes, in order: the whole account. */
export const allStreams: ReadonlyArray<AnyStream> = definedStreams

export const streamNames = allStreams.map((s) => s.name)

/** The stream of that name, whole. */
export const streamNamed = (name: string): AnyStream => {
  const stream = allStreams.find((s) => s.name === name)
  if (stream === undefined) throw new Error(`no stream named "${name}"; the streams are ${streamNames.join(", ")}`)
  return stream
}
