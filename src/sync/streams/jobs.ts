import { Schema } from "effect"
import { newestFirst } from "../pass/Incremental.js"
import { DateTime, Enum, link } from "./fields.js"
import { jobLineItems } from "./lineItems.js"
import { define } from "./Stream.js"

/** Jobs: sorted by update time but not filterable by it, so the incremental pass pages newest-first. */
export const jobsStream = define({
  name: "jobs",
  connection: "jobs",
  topic: "JOB",
  nodeType: "Job",
  fields: {
    id: Schema.NonEmptyString,
    jobNumber: Schema.Int,
    client: link("clients"),
    property: link("properties"),
    quote: Schema.NullOr(link("quotes")),
    request: Schema.NullOr(link("requests")),
    salesperson: Schema.NullOr(link("users")),
    title: Schema.NullOr(Schema.String),
    jobStatus: Enum,
    jobType: Enum,
    billingType: Enum,
    source: Enum,
    instructions: Schema.NullOr(Schema.String),
    defaultVisitTitle: Schema.String,
    jobberWebUri: Schema.String,
    total: Schema.Number,
    invoicedTotal: Schema.Number,
    uninvoicedTotal: Schema.Number,
    completedAndUninvoicedVisitsCount: Schema.Int,
    completedAndUninvoicedVisitsTotal: Schema.Number,
    readyToClose: Schema.Boolean,
    allowReviewRequest: Schema.Boolean,
    visitGenerationInProgress: Schema.Boolean,
    visitReschedulingInProgress: Schema.Boolean,
    willClientBeAutomaticallyCharged: Schema.NullOr(Schema.Boolean),
    startAt: Schema.NullOr(DateTime),
    endAt: Schema.NullOr(DateTime),
    completedAt: Schema.NullOr(DateTime),
    bookingConfirmationSentAt: Schema.NullOr(DateTime),
    nextDateToSendReviewSms: Schema.NullOr(DateTime),
    pendingInvoiceStartsAt: Schema.NullOr(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime
  },
  children: [jobLineItems],
  customFields: true,
  // job numbers do not change when a job is edited, so a full pass never loses a row to a reorder
  fullPass: { sort: [{ key: "JOB_NUMBER", direction: "ASCENDING" }] },
  incremental: newestFirst({ sort: [{ key: "UPDATED_AT", direction: "DESCENDING" }] }),
  lookup: (ids) => ({ filter: { ids } })
})

export type JobNode = Schema.Schema.Type<typeof jobsStream.node>
