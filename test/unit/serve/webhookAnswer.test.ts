import { SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Exit, FiberId } from "effect"
import { WebhookForeignApp, WebhookMalformed, WebhookSignatureInvalid } from "../../../src/changes/EventInbox.js"
import { BodyTooLarge, BodyUnreadable } from "../../../src/serve/requestBody.js"
import { webhookAnswer } from "../../../src/serve/webhookAnswer.js"

describe("webhookAnswer", () => {
  it("recorded, or recorded before: 200 with the outcome", () => {
    expect(webhookAnswer(Exit.succeed({ _tag: "Queued", topic: "JOB_UPDATE", accountId: "a" }))).toEqual({ status: 200, body: { ok: true, outcome: "Queued" } })
    expect(webhookAnswer(Exit.succeed({ _tag: "Duplicate", topic: "JOB_UPDATE", accountId: "a" })).body.outcome).toBe("Duplicate")
  })

  it.each([
    [new WebhookSignatureInvalid({ reason: "no signature header" }), 401, "invalid signature"],
    [new WebhookMalformed({ reason: "itemId contains a NUL character, which cannot be stored" }), 400, "itemId contains a NUL character, which cannot be stored"],
    [new WebhookForeignApp({ appId: "someone-elses" }), 403, "appId is not this app's"],
    [new BodyTooLarge({ limit: 65_536 }), 413, "request body larger than 65536 bytes"],
    [new BodyUnreadable({ cause: new Error("aborted") }), 400, "cannot read the body"],
    [new SqlError.SqlError({ cause: new Error("connection refused"), message: "connection refused" }), 500, "not stored; retry later"]
  ] as const)("a failure answers its status (%#)", (failure, status, error) => {
    expect([failure._tag, webhookAnswer(Exit.fail(failure))]).toEqual([failure._tag, { status, body: { ok: false, error } }])
  })

  it("a defect or an interruption (serve stopping) is a 500 the sender may retry, naming nothing inside", () => {
    expect(webhookAnswer(Exit.die(new Error("secret detail")))).toEqual({ status: 500, body: { ok: false, error: "not stored; retry later" } })
    expect(webhookAnswer(Exit.interrupt(FiberId.none)).status).toBe(500)
  })
})
