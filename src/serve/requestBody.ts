import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Data, Effect } from "effect"

/** The request's body is larger than the route takes: answered 413 (the sender should not retry it as it is). */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly limit: number }> {
  override get message() {
    return `request body larger than ${this.limit} bytes`
  }
}

/** The body could not be read (the client went away mid-body). */
export class BodyUnreadable extends Data.TaggedError("BodyUnreadable")<{ readonly cause: unknown }> {}

/**
 * The whole body, at most `limit` bytes. A larger one is refused without a reset: by its Content-Length before a
 * byte is read, else (chunked) as soon as it passes the limit; what is left of it is read and dropped by Node (the
 * server's request timeout bounds that), so the sender gets the 413 instead of a broken connection it would retry.
 * (@effect/platform's own limit destroys the socket.)
 */
export const readBodyUpTo = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
  Effect.async<Uint8Array, BodyTooLarge | BodyUnreadable>((resume) => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const declared = Number(incoming.headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) {
      incoming.resume()
      return resume(Effect.fail(new BodyTooLarge({ limit })))
    }
    const chunks: Array<Buffer> = []
    let bytes = 0
    let done = false
    const finish = (effect: Effect.Effect<Uint8Array, BodyTooLarge | BodyUnreadable>) => {
      if (done) return
      done = true
      resume(effect)
    }
    const onData = (chunk: Buffer) => {
      if (done) return // past the limit: dropped
      bytes += chunk.length
      if (bytes > limit) {
        chunks.length = 0
        return finish(Effect.fail(new BodyTooLarge({ limit })))
      }
      chunks.push(chunk)
    }
    const onEnd = () => finish(Effect.succeed(new Uint8Array(Buffer.concat(chunks))))
    const onError = (cause: unknown) => finish(Effect.fail(new BodyUnreadable({ cause })))
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onError)
    return Effect.sync(() => {
      incoming.off("end", onEnd)
      incoming.off("error", onError)
    })
  })
