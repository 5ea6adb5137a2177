import { Schema } from "effect"
import { fullPassesOnly } from "../pass/Incremental.js"
import { DateTime, embedded, Enum, link } from "./fields.js"
import { visitLineItems } from "./lineItems.js"
import { define } from "./Stream.js"

/**
 * Visits: no update time at all: full passes on their own cadence (and webhooks). Looked up by `ids`. A visit's line
 * items are its job's, and the service sends no visit event when they change: a changed job's visits are read again.
 */
export const visitsStream = define({
  name: "visits",
  connection: "visits",
  topic: "VISIT",
  nodeType: "Visit",
  fields: {
    id: Schema.NonEmptyString,
    title: Schema.NullOr(Schema.String),
    visitStatus: Enum,
    job: link("jobs"),
    client: link("clients"),
    property: link("properties"),
    invoice: Schema.NullOr(link("invoices")),
    createdBy: Schema.NullOr(link("users")),
    startAt: Schema.NullOr(DateTime),
    endAt: Schema.NullOr(DateTime),
    allDay: Schema.Boolean,
    duration: Schema.NullOr(Schema.Int),
    completedAt: Schema.NullOr(DateTime),
    completedBy: Schema.NullOr(Schema.String),
    isComplete: Schema.Boolean,
    clientConfirmed: Schema.Boolean,
    instructions: Schema.NullOr(Schema.String),
    isDefaultTitle: Schema.Boolean,
    isLastScheduledVisit: Schema.Boolean,
    incompleteJobFormsCount: Schema.Int,
    actionsUponComplete: Schema.Array(Enum),
    origin: Schema.NullOr(Enum),
    overrideOrder: Schema.NullOr(Schema.Int),
    routingOrder: Schema.NullOr(Schema.Int),
    teamReminderOffset: Schema.NullOr(Schema.Int),
    amounts: Schema.NullOr(embedded({ visitBasedBillingTotal: Schema.NullOr(Schema.Number) })),
    createdAt: DateTime
  },
  children: [visitLineItems],
  fullPass: {},
  incremental: fullPassesOnly,
  lookup: (ids) => ({ filter: { ids } }),
  dependsOn: [{ stream: "jobs", column: "job_id" }]
})
