import { Schema } from "effect"

/**
 * The vocabulary a stream's node Schema is written in. Columns and the GraphQL selection are derived from it
 * (Stream.ts), so a field is written once.
 */

/**
 * The shape the service writes its date-times in (`2025-03-01T09:30:00Z`, a fraction, an offset), every part in its
 * range: a string of this shape is one Date.parse reads, so it is checked by the pattern alone (nine date-times a job,
 * a hundred jobs a page: Date.parse was the costliest check of a node).
 */
const isoDateTime = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/

/** `ISO8601DateTime`: kept as the string the service sent; its column is `timestamptz`. */
export const DateTime = Schema.String.pipe(
  Schema.filter((s) => isoDateTime.test(s) || !Number.isNaN(Date.parse(s)), { message: () => "expected an ISO 8601 date-time", identifier: "DateTime" })
)

/** The annotation that marks a link to another node: its value is the linked stream's name. */
export const LinkAnnotation = Symbol.for("account-sync/sync/Link")

/** A link to another node (`client { id }`): one `<field>_id` column, indexed, no foreign key. */
export const link = (stream: string) => Schema.Struct({ id: Schema.NonEmptyString }).annotations({ [LinkAnnotation]: stream })

/** The annotation that marks an embedded value object, flattened into `<field>_<inner>` columns. */
export const EmbeddedAnnotation = Symbol.for("account-sync/sync/Embedded")

/** A value object inside the node (`amounts { total ... }`): each of its fields becomes a `<field>_<inner>` column. */
export const embedded = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ [EmbeddedAnnotation]: true })

/** A geographic coordinate sent as a number: a `double precision` column, like every coordinate. */
export const Coordinate = Schema.Number.annotations({ identifier: "Coordinate" })

/**
 * A coordinate the service sends as a string (a client's address): the same `double precision` column as every
 * other coordinate; a string that is no number lands as null (`raw` keeps it).
 */
export const CoordinateText = Schema.String.annotations({ identifier: "CoordinateText" })

/** Enums are kept as strings: a value the service adds later must not fail a run. */
export const Enum = Schema.String
