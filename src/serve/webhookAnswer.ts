import type { SqlError } from "@effect/sql"
import { Cause, Exit, Option } from "effect"
import type { WebhookForeignApp, WebhookMalformed, WebhookOutcome, WebhookSignatureInvalid } from "../changes/EventInbox.js"
import type { BodyTooLarge, BodyUnreadable } from "./requestBody.js"

/** What `/webhooks` answers: its status and JSON body. */
export interface WebhookAnswer {
  readonly status: number
  readonly body: { readonly ok: boolean; readonly outcome?: WebhookOutcome["_tag"]; readonly error?: string }
}

/** Why a delivery was not recorded. */
export type WebhookFailure = WebhookSignatureInvalid | WebhookMalformed | WebhookForeignApp | BodyTooLarge | BodyUnreadable | SqlError.SqlError

const refused = (status: number, error: string): WebhookAnswer => ({ status, body: { ok: false, error } })

const answerTo = (failure: WebhookFailure): WebhookAnswer => {
  switch (failure._tag) {
    case "WebhookSignatureInvalid":
      return refused(401, "invalid signature")
    case "WebhookMalformed":
      return refused(400, failure.reason)
    case "WebhookForeignApp":
      return refused(403, "appId is not this app's")
    case "BodyTooLarge":
      return refused(413, failure.message)
    case "BodyUnreadable":
      return refused(400, "cannot read the body")
    case "SqlError":
      return refused(500, "not stored; retry later")
  }
}

/**
 * A delivery's answer: 200 once it is recorded (or was already); a delivery the same body would fail forever is
 * refused with a 4xx the sender should not retry (bad signature 401, malformed 400, another app's 403, too large 413);
 * the database failing, a defect or an interruption (serve stopping) is 500, which the sender may retry.
 */
export const webhookAnswer = (exit: Exit.Exit<WebhookOutcome, WebhookFailure>): WebhookAnswer =>
  Exit.isSuccess(exit)
    ? { status: 200, body: { ok: true, outcome: exit.value._tag } }
    : Option.match(Cause.failureOption(exit.cause), { onNone: () => refused(500, "not stored; retry later"), onSome: answerTo })
