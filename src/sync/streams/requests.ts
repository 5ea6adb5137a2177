import { Schema } from "effect"
import { updatedSince } from "../pass/Incremental.js"
import { updatedSinceEvents } from "../pass/Refetch.js"
import { DateTime, Enum, link } from "./fields.js"
import { requestLineItems } from "./lineItems.js"
import { define } from "./Stream.js"

/** The rows updated after `since`: an incremental pass and the re-read of change events. */
const updatedAfter = (since: string) => ({ filter: { updatedAt: { after: since } } })

/** Requests: filterable by update time (no sort by it: creation order). */
export const requestsStream = define({
  name: "requests",
  connection: "requests",
  topic: "REQUEST",
  nodeType: "Request",
  fields: {
    id: Schema.NonEmptyString,
    title: Schema.NullOr(Schema.String),
    requestStatus: Enum,
    client: link("clients"),
    property: Schema.NullOr(link("properties")),
    referringClient: Schema.NullOr(link("clients")),
    salesperson: Schema.NullOr(link("users")),
    companyName: Schema.NullOr(Schema.String),
    contactName: Schema.NullOr(Schema.String),
    email: Schema.NullOr(Schema.String),
    phone: Schema.NullOr(Schema.String),
    source: Schema.String,
    isArchivable: Schema.Boolean,
    isScheduled: Schema.Boolean,
    jobberWebUri: Schema.String,
    createdAt: DateTime,
    updatedAt: DateTime
  },
  children: [requestLineItems],
  fullPass: {},
  // no id filter: a row not seen by a full pass is asked for by its creation time, which never changes
  near: { column: "created_at", variables: (createdAt) => ({ filter: { createdAt: { eq: createdAt } } }) },
  incremental: updatedSince(updatedAfter),
  refetch: updatedSinceEvents(updatedAfter)
})
