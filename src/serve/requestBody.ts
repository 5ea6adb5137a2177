import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Data, Effect, Either } from "effect"
import type { IncomingMessage } from "node:http"

/** The request's body is larger than the route takes: answered 413 (the sender should not retry it as it is). */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly limit: number }> {
  override get message() {
    return `request body larger than ${this.limit} bytes`
  }
}

/** The body could not be read (the client went away mid-body). */
export class BodyUnreadable extends Data.TaggedError("BodyUnreadable")<{ readonly cause: unknown }> {}

/**
 * The whole body of `incoming`, at most `limit` bytes, handed to `done` once. A larger one is refused without a reset:
 * by its Content-Length before a byte is read, else (chunked) as soon as it passes the limit; what is left of it is
 * read and dropped by Node (the server's request timeout bounds that), so the sender gets the 413 instead of a broken
 * connection it would retry. (@effect/platform's own limit destroys the socket.) Gives back a function that stops
 * listening (for a caller interrupted meanwhile).
 */
export const readIncomingUpTo = (
  incoming: IncomingMessage,
  limit: number,
  done: (body: Either.Either<Uint8Array, BodyTooLarge | BodyUnreadable>) => void
): (() => void) => {
  const declared = Number(incoming.headers["content-length"])
  if (Number.isFinite(declared) && declared > limit) {
    incoming.resume()
    done(Either.left(new BodyTooLarge({ limit })))
    return () => {}
  }
  const chunks: Array<Buffer> = []
  let bytes = 0
  let finished = false
  const finish = (body: Either.Either<Uint8Array, BodyTooLarge | BodyUnreadable>) => {
    if (finished) return
    finished = true
    done(body)
  }
  const onData = (chunk: Buffer) => {
    if (finished) return // past the limit: dropped
    bytes += chunk.length
    if (bytes > limit) {
      chunks.length = 0
      return finish(Either.left(new BodyTooLarge({ limit })))
    }
    chunks.push(chunk)
  }
  const onEnd = () => finish(Either.right(new Uint8Array(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))))
  const onError = (cause: unknown) => finish(Either.left(new BodyUnreadable({ cause })))
  incoming.on("data", onData)
  incoming.once("end", onEnd)
  incoming.once("error", onError)
  return () => {
    incoming.off("end", onEnd)
    incoming.off("error", onError)
  }
}

/** The request's whole body, at most `limit` bytes (`readIncomingUpTo`). */
export const readBodyUpTo = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
  Effect.async<Uint8Array, BodyTooLarge | BodyUnreadable>((resume) => {
    const stop = readIncomingUpTo(NodeHttpServerRequest.toIncomingMessage(request), limit, (body) => resume(body))
    return Effect.sync(stop)
  })
