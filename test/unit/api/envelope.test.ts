import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { EnvelopeSchema, plainEnvelope } from "../../../src/api/envelope.js"

const throttleStatus = { maximumAvailable: 10_000, currentlyAvailable: 9_950, restoreRate: 500 }
const bySchema = Schema.decodeUnknownEither(EnvelopeSchema)

describe("the GraphQL envelope read without its Schema", () => {
  it("reads a plain answer as the Schema decodes it", () => {
    const answers: ReadonlyArray<unknown> = [
      { data: { jobs: { nodes: [] } }, extensions: { cost: { requestedQueryCost: 52, actualQueryCost: 3, throttleStatus } } },
      { data: { a: 1 }, extensions: { cost: { requestedQueryCost: 52, throttleStatus }, versioning: { warnings: ["x"] } } },
      { data: { a: 1 }, extensions: { cost: { requestedQueryCost: 52, actualQueryCost: null, throttleStatus, extra: true } } },
      { data: null, extensions: { versioning: 3 } },
      { data: { a: 1 } },
      {}
    ]
    for (const answer of answers) {
      const plain = plainEnvelope(answer)
      expect(plain).toBeDefined()
      expect(plain).toEqual(Either.getOrThrow(bySchema(answer)))
    }
  })

  it("leaves everything else to the Schema: errors, a cost it cannot read, not an object", () => {
    const others: ReadonlyArray<unknown> = [
      { data: null, errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }] },
      { data: { a: 1 }, extensions: { cost: { requestedQueryCost: "52", throttleStatus } } },
      { data: { a: 1 }, extensions: { cost: { requestedQueryCost: 52, throttleStatus: { ...throttleStatus, restoreRate: null } } } },
      { data: { a: 1 }, extensions: [] },
      [],
      null,
      "text"
    ]
    for (const other of others) expect(plainEnvelope(other)).toBeUndefined()
  })
})
