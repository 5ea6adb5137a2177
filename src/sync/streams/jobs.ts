import { Schema } from "effect"
import { JobsPageQuery } from "../../api/documents.js"
import { column, type StreamDefinition } from "./StreamDefinition.js"

const DateTime = Schema.String.pipe(
  Schema.filter((s) => !Number.isNaN(Date.parse(s)), { message: () => "expected an ISO 8601 date-time" })
)

/**
 * One job as the service sends it. Enums are kept as strings: a value the service adds later must not fail a run.
 */
export const JobNode = Schema.Struct({
  id: Schema.NonEmptyString,
  jobNumber: Schema.Int,
  title: Schema.NullOr(Schema.String),
  jobStatus: Schema.String,
  jobType: Schema.String,
  billingType: Schema.String,
  source: Schema.String,
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
})
export type JobNode = typeof JobNode.Type

export const jobsStream: StreamDefinition<JobNode> = {
  name: "jobs",
  table: "jobs",
  document: JobsPageQuery,
  connectionPath: ["jobs"],
  node: JobNode,
  columns: [
    column("jobNumber", "integer"),
    column("title", "text"),
    column("jobStatus", "text"),
    column("jobType", "text"),
    column("billingType", "text"),
    column("source", "text"),
    column("instructions", "text"),
    column("defaultVisitTitle", "text"),
    column("jobberWebUri", "text"),
    column("total", "double precision"),
    column("invoicedTotal", "double precision"),
    column("uninvoicedTotal", "double precision"),
    column("completedAndUninvoicedVisitsCount", "integer"),
    column("completedAndUninvoicedVisitsTotal", "double precision"),
    column("readyToClose", "boolean"),
    column("allowReviewRequest", "boolean"),
    column("visitGenerationInProgress", "boolean"),
    column("visitReschedulingInProgress", "boolean"),
    column("willClientBeAutomaticallyCharged", "boolean"),
    column("startAt", "timestamptz"),
    column("endAt", "timestamptz"),
    column("completedAt", "timestamptz"),
    column("bookingConfirmationSentAt", "timestamptz"),
    column("nextDateToSendReviewSms", "timestamptz"),
    column("pendingInvoiceStartsAt", "timestamptz"),
    column("createdAt", "timestamptz"),
    column("updatedAt", "timestamptz")
  ],
  maxPageSize: 100,
  // job numbers do not change when a job is edited, so a full pass never loses a row to a reorder
  fullPassVariables: { sort: [{ key: "JOB_NUMBER", direction: "ASCENDING" }] },
  incremental: { _tag: "NewestFirst", variables: { sort: [{ key: "UPDATED_AT", direction: "DESCENDING" }] } },
  updatedAt: (job) => job.updatedAt
}
