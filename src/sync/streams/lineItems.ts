import { Schema } from "effect"
import type { ChildSpec } from "./Stream.js"
import { DateTime, Enum, link } from "./fields.js"

/**
 * The line item connections of the node types that have them, each a child table replaced with its parent. Only the
 * current fields (deprecated `cost`, `qty`, `unitCost`... are left out in favour of their successors).
 */

const common = {
  id: Schema.NonEmptyString,
  name: Schema.String,
  description: Schema.String,
  category: Enum,
  quantity: Schema.Number,
  unitPrice: Schema.Number,
  totalPrice: Schema.Number,
  taxable: Schema.Boolean,
  linkedProductOrService: Schema.NullOr(link("products")),
  createdAt: DateTime,
  updatedAt: DateTime
}

const jobLineItemFields = { ...common, totalCost: Schema.NullOr(Schema.Number) }

export const jobLineItems: ChildSpec = {
  field: "lineItems",
  table: "job_line_items",
  nodeType: "JobLineItem",
  fields: jobLineItemFields,
  parentColumn: "job_id"
}

/** A visit's line items are its job's (the same ids): kept per visit. */
export const visitLineItems: ChildSpec = {
  field: "lineItems",
  table: "visit_line_items",
  nodeType: "JobLineItem",
  fields: jobLineItemFields,
  parentColumn: "visit_id",
  keyedByParent: true
}

export const quoteLineItems: ChildSpec = {
  field: "lineItems",
  table: "quote_line_items",
  nodeType: "QuoteLineItem",
  fields: {
    ...common,
    totalCost: Schema.NullOr(Schema.Number),
    markup: Schema.NullOr(Schema.Number),
    optional: Schema.Boolean,
    recommended: Schema.NullOr(Schema.Boolean),
    sortOrder: Schema.NullOr(Schema.Int),
    textOnly: Schema.Boolean
  },
  parentColumn: "quote_id"
}

export const invoiceLineItems: ChildSpec = {
  field: "lineItems",
  table: "invoice_line_items",
  nodeType: "InvoiceLineItem",
  fields: {
    ...common,
    date: Schema.NullOr(DateTime),
    originalCost: Schema.NullOr(Schema.Number),
    jobLineItem: Schema.NullOr(link("job_line_items"))
  },
  parentColumn: "invoice_id"
}

export const requestLineItems: ChildSpec = {
  field: "lineItems",
  table: "request_line_items",
  nodeType: "RequestLineItem",
  fields: {
    ...common,
    totalCost: Schema.NullOr(Schema.Number),
    unitCost: Schema.NullOr(Schema.Number),
    sortOrder: Schema.NullOr(Schema.Int)
  },
  parentColumn: "request_id"
}
