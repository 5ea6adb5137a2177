import { Schema } from "effect"
import { Coordinate, CoordinateText, embedded, Enum } from "./fields.js"

/** The address value objects, flattened into `<field>_<part>` columns (coordinates as latitude and longitude). */

const coordinates = Schema.NullOr(embedded({ latitude: Coordinate, longitude: Coordinate }))

const parts = {
  street: Schema.String,
  street1: Schema.NullOr(Schema.String),
  street2: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  province: Schema.NullOr(Schema.String),
  postalCode: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String)
}

/** PropertyAddress, InvoiceBillingAddress, UserAddress. */
export const geocodedAddress = embedded({ ...parts, name: Schema.NullOr(Schema.String), geoStatus: Schema.NullOr(Enum), coordinates })

/** ClientAddress (every part present, coordinates sent as strings, landed as numbers like every coordinate). */
export const clientAddress = embedded({
  street: Schema.String,
  street1: Schema.String,
  street2: Schema.String,
  city: Schema.String,
  province: Schema.String,
  postalCode: Schema.String,
  country: Schema.String,
  name: Schema.NullOr(Schema.String),
  latitude: CoordinateText,
  longitude: CoordinateText
})
