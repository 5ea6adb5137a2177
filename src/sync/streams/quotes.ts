import { Schema } from "effect"
import { updatedSince } from "../pass/Incremental.js"
import { updatedSinceEvents } from "../pass/Refetch.js"
import { DateTime, embedded, Enum, link } from "./fields.js"
import { quoteLineItems } from "./lineItems.js"
import { define } from "./Stream.js"

/** The rows updated after `since`: an incremental pass and the re-read of change events. */
const updatedAfter = (since: string) => ({ filter: { updatedAt: { after: since } } })

/** Quotes: filterable by update time (no sort by it: creation order). */
export const quotesStream = define({
  name: "quotes",
  connection: "quotes",
  topic: "QUOTE",
  nodeType: "Quote",
  fields: {
    id: Schema.NonEmptyString,
    quoteNumber: Schema.String,
    title: Schema.NullOr(Schema.String),
    quoteStatus: Enum,
    client: Schema.NullOr(link("clients")),
    property: Schema.NullOr(link("properties")),
    request: Schema.NullOr(link("requests")),
    salesperson: Schema.NullOr(link("users")),
    amounts: embedded({
      subtotal: Schema.Number,
      discountAmount: Schema.Number,
      taxAmount: Schema.Number,
      nonTaxAmount: Schema.Number,
      total: Schema.Number,
      depositAmount: Schema.Number,
      outstandingDepositAmount: Schema.Number
    }),
    depositAmountUnallocated: Schema.NullOr(Schema.Number),
    message: Schema.NullOr(Schema.String),
    contractDisclaimer: Schema.NullOr(Schema.String),
    processedBy: Schema.NullOr(Enum),
    eligibleForFinancing: Schema.Boolean,
    hasQuoteNumberDuplicates: Schema.Boolean,
    hasRefundableSurchargePayments: Schema.Boolean,
    clientHubUri: Schema.NullOr(Schema.String),
    clientHubViewedAt: Schema.NullOr(DateTime),
    jobberWebUri: Schema.String,
    sentAt: Schema.NullOr(DateTime),
    transitionedAt: DateTime,
    createdAt: DateTime,
    updatedAt: DateTime
  },
  children: [quoteLineItems],
  customFields: true,
  fullPass: {},
  // no id filter: a row not seen by a full pass is asked for by its creation time, which never changes
  near: { column: "created_at", variables: (createdAt) => ({ filter: { createdAt: { eq: createdAt } } }) },
  incremental: updatedSince(updatedAfter),
  refetch: updatedSinceEvents(updatedAfter)
})
