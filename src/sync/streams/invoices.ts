import { Schema } from "effect"
import { updatedSince } from "../pass/Incremental.js"
import { updatedSinceEvents } from "../pass/Refetch.js"
import { geocodedAddress } from "./addresses.js"
import { DateTime, embedded, Enum, link } from "./fields.js"
import { invoiceLineItems } from "./lineItems.js"
import { define } from "./Stream.js"

/** The rows updated after `since`, oldest update first: an incremental pass and the re-read of change events. */
const updatedAfter = (since: string) => ({ filter: { updatedAt: { after: since } }, sort: [{ key: "UPDATED_AT", direction: "ASCENDING" }] })

/** Invoices: filterable by update time, sorted by it ascending in an incremental pass. */
export const invoicesStream = define({
  name: "invoices",
  connection: "invoices",
  topic: "INVOICE",
  nodeType: "Invoice",
  fields: {
    id: Schema.NonEmptyString,
    invoiceNumber: Schema.String,
    subject: Schema.String,
    invoiceStatus: Enum,
    client: Schema.NullOr(link("clients")),
    salesperson: Schema.NullOr(link("users")),
    amounts: Schema.NullOr(
      embedded({
        subtotal: Schema.Number,
        discountAmount: Schema.Number,
        legacyDiscountAmount: Schema.Number,
        taxAmount: Schema.Number,
        nonTaxAmount: Schema.Number,
        tipsTotal: Schema.Number,
        total: Schema.Number,
        depositAmount: Schema.Number,
        paymentsTotal: Schema.Number,
        invoiceBalance: Schema.Number
      })
    ),
    billingAddress: Schema.NullOr(geocodedAddress),
    billingIsSameAsPropertyAddress: Schema.NullOr(Schema.Boolean),
    invoiceTermType: Schema.NullOr(Enum),
    invoiceNet: Schema.NullOr(Schema.Int),
    invoiceNetLabel: Schema.NullOr(Schema.String),
    taxCalculationMethod: Schema.String,
    message: Schema.NullOr(Schema.String),
    contractDisclaimer: Schema.NullOr(Schema.String),
    allowReviewRequest: Schema.Boolean,
    automaticPaymentsError: Schema.NullOr(Schema.String),
    hasInvoiceNumberDuplicates: Schema.Boolean,
    hasRefundableSurchargePayments: Schema.Boolean,
    waitingForFinancedPayment: Schema.Boolean,
    clientHubUri: Schema.NullOr(Schema.String),
    dateViewedInClientHub: Schema.NullOr(DateTime),
    jobberWebUri: Schema.String,
    issuedDate: Schema.NullOr(DateTime),
    dueDate: Schema.NullOr(DateTime),
    receivedDate: Schema.NullOr(DateTime),
    nextDateToSendReviewSms: Schema.NullOr(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime
  },
  children: [invoiceLineItems],
  customFields: true,
  fullPass: {},
  // no id filter: a row not seen by a full pass is asked for by its creation time, which never changes
  near: { column: "created_at", variables: (createdAt) => ({ filter: { createdAt: { eq: createdAt } } }) },
  incremental: updatedSince(updatedAfter, "rows updated after the mark minus the overlap (filter updatedAt), oldest update first"),
  refetch: updatedSinceEvents(updatedAfter)
})
