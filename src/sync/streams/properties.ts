import { Schema } from "effect"
import { fullPassesOnly } from "../pass/Incremental.js"
import { byStoredParent } from "../pass/Refetch.js"
import { geocodedAddress } from "./addresses.js"
import { DateTime, link } from "./fields.js"
import { define } from "./Stream.js"

/** Properties: no update time, no filter by it, no sort: full passes on their own cadence (and webhooks). */
export const propertiesStream = define({
  name: "properties",
  connection: "properties",
  topic: "PROPERTY",
  nodeType: "Property",
  fields: {
    id: Schema.NonEmptyString,
    client: Schema.NullOr(link("clients")),
    name: Schema.NullOr(Schema.String),
    address: geocodedAddress,
    isBillingAddress: Schema.NullOr(Schema.Boolean),
    routingOrder: Schema.NullOr(Schema.Int),
    jobberWebUri: Schema.String,
    createdAt: DateTime
  },
  customFields: true,
  fullPass: {},
  // no id filter, no time filter: a row not seen by a full pass is asked for among its client's properties
  near: { column: "client_id", variables: (clientId) => ({ filter: { clientId } }) },
  refetch: byStoredParent("client_id", (clientId) => ({ filter: { clientId } })),
  incremental: fullPassesOnly
})
