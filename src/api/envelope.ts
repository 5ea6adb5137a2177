import { Either, type ParseResult, Schema } from "effect"

/** The GraphQL response envelope: its Schema, and a reading of the common answer that does not need it. */

const ThrottleStatusSchema = Schema.Struct({
  maximumAvailable: Schema.Number,
  currentlyAvailable: Schema.Number,
  restoreRate: Schema.Number
})

const CostSchema = Schema.Struct({
  requestedQueryCost: Schema.Number,
  actualQueryCost: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => 0 }),
  throttleStatus: ThrottleStatusSchema
})

const GraphqlErrorSchema = Schema.Struct({
  message: Schema.String,
  extensions: Schema.optional(Schema.Struct({ code: Schema.optional(Schema.String) }))
})

/** The GraphQL response envelope, decoded at the boundary; `data` is decoded by whoever asked for it. */
export const EnvelopeSchema = Schema.Struct({
  data: Schema.optional(Schema.NullOr(Schema.Unknown)),
  errors: Schema.optional(Schema.Array(GraphqlErrorSchema)),
  // versioning is the watch's to decode: a block it cannot read must not cost the answer
  extensions: Schema.optional(Schema.Struct({ cost: Schema.optional(CostSchema), versioning: Schema.optional(Schema.Unknown) }))
})
type Envelope = typeof EnvelopeSchema.Type
const decodeBySchema = Schema.decodeUnknownEither(EnvelopeSchema)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The answer of nearly every request (data, its cost, maybe `versioning`; no errors) read by hand, as the Schema would
 * decode it; undefined for anything else, which the Schema then decodes (and describes when it does not fit).
 */
export const plainEnvelope = (json: unknown): Envelope | undefined => {
  if (!isRecord(json) || json.errors !== undefined) return undefined
  const { data, extensions } = json
  if (extensions === undefined) return { data }
  if (!isRecord(extensions)) return undefined
  const { cost, versioning } = extensions
  if (cost === undefined) return { data, extensions: { versioning } }
  if (!isRecord(cost) || !isRecord(cost.throttleStatus)) return undefined
  const { requestedQueryCost, actualQueryCost } = cost
  const { maximumAvailable, currentlyAvailable, restoreRate } = cost.throttleStatus
  if (typeof requestedQueryCost !== "number" || !(actualQueryCost === undefined || actualQueryCost === null || typeof actualQueryCost === "number")) return undefined
  if (typeof maximumAvailable !== "number" || typeof currentlyAvailable !== "number" || typeof restoreRate !== "number") return undefined
  const throttleStatus = { maximumAvailable, currentlyAvailable, restoreRate }
  return { data, extensions: { cost: { requestedQueryCost, actualQueryCost: actualQueryCost === undefined ? 0 : actualQueryCost, throttleStatus }, versioning } }
}

/** The envelope decoded at the boundary; `data` is decoded by whoever asked for it. */
export const decodeEnvelope = (json: unknown): Either.Either<Envelope, ParseResult.ParseError> => {
  const plain = plainEnvelope(json)
  return plain === undefined ? decodeBySchema(json) : Either.right(plain)
}
