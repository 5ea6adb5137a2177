import { Schema } from "effect"
import { fullPassesOnly } from "../pass/Incremental.js"
import { embedded, Enum } from "./fields.js"
import { define } from "./Stream.js"

/**
 * Products and services (`products`; the older `productOrServices` is deprecated in its favour). No timestamps at
 * all: full passes on their own cadence (and webhooks), inactive ones included. Looked up by `ids`.
 */
export const productsStream = define({
  name: "products",
  connection: "products",
  topic: "PRODUCT_OR_SERVICE",
  nodeType: "ProductOrService",
  fields: {
    id: Schema.NonEmptyString,
    name: Schema.String,
    description: Schema.NullOr(Schema.String),
    category: Enum,
    defaultUnitCost: Schema.Number,
    internalUnitCost: Schema.NullOr(Schema.Number),
    markup: Schema.NullOr(Schema.Number),
    taxable: Schema.NullOr(Schema.Boolean),
    visible: Schema.NullOr(Schema.Boolean),
    durationMinutes: Schema.NullOr(Schema.Int),
    bookableType: Schema.NullOr(Enum),
    onlineBookingsEnabled: Schema.NullOr(Schema.Boolean),
    onlineBookingSortOrder: Schema.NullOr(Schema.Int),
    quantityRange: Schema.NullOr(embedded({ minQuantity: Schema.NullOr(Schema.Int), maxQuantity: Schema.NullOr(Schema.Int), quantityEnabled: Schema.Boolean }))
  },
  fullPass: { showInactive: true },
  incremental: fullPassesOnly,
  lookup: (ids) => ({ filter: { ids }, showInactive: true })
})
