import { Cause, Exit } from "effect"
import type { WebhookOutcome } from "../changes/EventInbox.js"

/** What `/webhooks` answers: its status and JSON body. */
export interface WebhookAnswer {
  readonly status: number
  readonly body: { readonly ok: boolean; readonly outcome?: WebhookOutcome["_tag"]; readonly error?: string }
}

const refused = (status: number, error: string): WebhookAnswer => ({ status, body: { ok: false, error } })

/**
 * A delivery's answer: 200 once it is recorded (or was already); a delivery the same body would fail forever is
 * refused with a 4xx the sender should not retry (bad signature 401, malformed 400, another app's 403, too large 413);
 * anything else (the database, a defect) is 500, which the sender may retry.
 */
export const webhookAnswer = (exit: Exit.Exit<WebhookOutcome, unknown>): WebhookAnswer => {
  if (Exit.isSuccess(exit)) return { status: 200, body: { ok: true, outcome: exit.value._tag } }
  const failure = Cause.failureOption(exit.cause)
  const error = failure._tag === "Some" ? (failure.value as { readonly _tag?: unknown; readonly reason?: unknown; readonly message?: unknown }) : undefined
  switch (error?._tag) {
    case "WebhookSignatureInvalid":
      return refused(401, "invalid signature")
    case "WebhookMalformed":
      return refused(400, String(error.reason))
    case "WebhookForeignApp":
      return refused(403, "appId is not this app's")
    case "BodyTooLarge":
      return refused(413, String(error.message))
    case "BodyUnreadable":
      return refused(400, "cannot read the body")
    default:
      return refused(500, "not stored; retry later")
  }
}
