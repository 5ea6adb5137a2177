import { SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Exit, FiberId } from "effect"
import { GraphqlTokenInvalid, TransientFailure } from "../../../src/api/errors.js"
import { NotConnected, TokenRefused } from "../../../src/auth/errors.js"
import { NodeSchemaMismatch } from "../../../src/sync/errors.js"
import { classify, isRevocation } from "../../../src/sync/RunOutcome.js"

describe("classify", () => {
  const cases = [
    ["success", Exit.void, "succeeded"],
    ["interruption", Exit.failCause(Cause.interrupt(FiberId.none)), "interrupted"],
    ["refresh refused", Exit.fail(new TokenRefused({ accountId: "a", reason: "invalid_grant" })), "revoked"],
    ["connection gone", Exit.fail(new NotConnected({ accountId: "a", status: "disconnected" })), "revoked"],
    ["a fresh token rejected", Exit.fail(new GraphqlTokenInvalid({ operation: "JobsPage" })), "revoked"],
    ["a transient failure after retries", Exit.fail(new TransientFailure({ operation: "JobsPage", reason: "HTTP 503" })), "failed"],
    [
      "a node that fails its schema",
      Exit.fail(new NodeSchemaMismatch({ accountId: "a", stream: "jobs", field: "jobNumber", position: 0, nodeId: "j1", detail: "expected a number" })),
      "failed"
    ],
    ["a database error", Exit.fail(new SqlError.SqlError({ cause: new Error("relation does not exist"), message: "Failed to execute statement" })), "failed"],
    ["a defect", Exit.die(new Error("boom")), "failed"]
  ] as const
  for (const [name, exit, outcome] of cases) {
    it(`${name}: ${outcome}`, () => expect(classify(exit as Exit.Exit<unknown, never>).outcome).toBe(outcome))
  }

  it("a failure carries its message, the database's included; success and interruption carry none", () => {
    expect(classify(Exit.void).error).toBeUndefined()
    expect(classify(Exit.failCause(Cause.interrupt(FiberId.none))).error).toBeUndefined()
    expect(classify(Exit.fail(new TransientFailure({ operation: "JobsPage", reason: "HTTP 503" }))).error).toBe("JobsPage: transient failure: HTTP 503")
    expect(classify(Exit.fail(new SqlError.SqlError({ cause: new Error("disk full"), message: "Failed to execute statement" }))).error).toBe(
      "database error: Failed to execute statement: disk full"
    )
  })

  it("isRevocation knows errors by their type, not by a look-alike", () => {
    expect(isRevocation(new TokenRefused({ accountId: "a", reason: "x" }))).toBe(true)
    expect(isRevocation({ message: "TokenRefused" })).toBe(false)
    expect(isRevocation(new TransientFailure({ operation: "x", reason: "y" }))).toBe(false)
  })
})
