import { Schema } from "effect"
import { updatedSince } from "../pass/Incremental.js"
import { updatedSinceEvents } from "../pass/Refetch.js"
import { clientAddress } from "./addresses.js"
import { DateTime, embedded, Enum } from "./fields.js"
import { define } from "./Stream.js"

/** The rows updated after `since`, oldest update first: an incremental pass and the re-read of change events. */
const updatedAfter = (since: string) => ({ filter: { updatedAt: { after: since } }, sort: { key: "UPDATED_AT", direction: "ASCENDING" } })

/** Clients: filterable by update time, sorted by it ascending in an incremental pass. */
export const clientsStream = define({
  name: "clients",
  connection: "clients",
  topic: "CLIENT",
  nodeType: "Client",
  fields: {
    id: Schema.NonEmptyString,
    name: Schema.String,
    firstName: Schema.String,
    lastName: Schema.String,
    companyName: Schema.NullOr(Schema.String),
    isCompany: Schema.Boolean,
    title: Schema.NullOr(Schema.String),
    secondaryName: Schema.NullOr(Schema.String),
    email: Schema.NullOr(Schema.String),
    phone: Schema.NullOr(Schema.String),
    balance: Schema.Number,
    billingAddressPresent: Schema.Boolean,
    billingAddress: Schema.NullOr(clientAddress),
    paymentTerm: Schema.NullOr(embedded({ id: Schema.String, name: Schema.String, days: Schema.Int, termType: Enum, isEditable: Schema.Boolean })),
    isPaymentTermAccountDefault: Schema.NullOr(Schema.Boolean),
    isArchivable: Schema.Boolean,
    isArchived: Schema.Boolean,
    isBillingContact: Schema.Boolean,
    isLead: Schema.Boolean,
    leadSource: Schema.NullOr(Schema.String),
    role: Schema.String,
    sampleData: Schema.Boolean,
    scheduledItemsAvailable: Schema.Boolean,
    receivesFollowUps: Schema.Boolean,
    receivesInvoiceFollowUps: Schema.Boolean,
    receivesQuoteFollowUps: Schema.Boolean,
    receivesReminders: Schema.Boolean,
    receivesReviewRequests: Schema.Boolean,
    clientHubDelegateLoginUrl: Schema.NullOr(Schema.String),
    clientHubUserId: Schema.NullOr(Schema.String),
    jobberWebUri: Schema.String,
    createdAt: DateTime,
    updatedAt: DateTime
  },
  customFields: true,
  // creation order: no edit moves a row
  fullPass: {},
  // no id filter: a row not seen by a full pass is asked for by its creation time, which never changes
  near: { column: "created_at", variables: (createdAt) => ({ filter: { createdAt: { eq: createdAt } } }) },
  incremental: updatedSince(updatedAfter, "rows updated after the mark minus the overlap (filter updatedAt), oldest update first"),
  refetch: updatedSinceEvents(updatedAfter)
})
