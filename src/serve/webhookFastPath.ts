import { Effect, FiberRef, Runtime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { EventInbox, signatureHeader } from "../changes/EventInbox.js"
import { readIncomingUpTo } from "./requestBody.js"
import { webhookAnswer } from "./webhookAnswer.js"

/** The largest webhook body taken (an event is a few hundred bytes). */
export const webhookBodyLimit = 64 * 1024

/** A Node-level handler that may take a request before the platform's router sees it: true when it took it. */
export type RequestClaim = (request: IncomingMessage, response: ServerResponse) => boolean

const isWebhookPost = (request: IncomingMessage) => {
  if (request.method !== "POST" || request.url === undefined) return false
  const query = request.url.indexOf("?")
  return (query === -1 ? request.url : request.url.slice(0, query)) === "/webhooks"
}

/**
 * `POST /webhooks` straight from Node's server to `EventInbox.receive`, with the router's route's answers
 * (`webhookAnswer`). The service wants an answer within a second, and under a burst beside busy workers serve's CPU
 * decides it: through the platform's router a delivery cost serve four times what it costs here before `receive` did
 * anything (a request object, a scope and a fiber, the middleware, the response's conversion; docs/performance.md).
 * With tracing on (an exporter set) the router's route takes it instead, so that each delivery has its server span.
 */
export const webhookFastPath: Effect.Effect<RequestClaim | undefined, never, EventInbox> = Effect.gen(function* () {
  if (yield* FiberRef.get(FiberRef.currentTracerEnabled)) return undefined
  const inbox = yield* EventInbox
  const run = Runtime.runCallback(yield* Effect.runtime<never>())
  return (request, response) => {
    if (!isWebhookPost(request)) return false
    readIncomingUpTo(request, webhookBodyLimit, (body) => {
      const signature = request.headers[signatureHeader]
      run(Effect.flatMap(body, (bytes) => inbox.receive(bytes, Array.isArray(signature) ? signature[0] : signature)), {
        onExit: (exit) => {
          const answer = webhookAnswer(exit)
          const text = JSON.stringify(answer.body)
          response.writeHead(answer.status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
          response.end(text)
        }
      })
    })
    return true
  }
})
