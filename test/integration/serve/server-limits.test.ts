import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import * as net from "node:net"
import { defaultHttpLimits, makeNodeServer, serveRouter } from "../../../src/serve/Server.js"
import { freePort } from "../../support/connector.js"

const limits = {
  requestTimeout: Duration.millis(1_500),
  headersTimeout: Duration.millis(300),
  keepAliveTimeout: Duration.millis(200),
  maxConnections: 2
}

const router = HttpRouter.empty.pipe(HttpRouter.get("/", HttpServerResponse.text("ok\n")))

/** A raw TCP client: what it was sent back and when the server closed it (ms after `connect`). */
const rawClient = (port: number, send: string) =>
  Effect.async<{ readonly received: string; readonly closedAfterMs: number }>((resume) => {
    const started = performance.now()
    let received = ""
    const socket = net.connect(port, "127.0.0.1", () => socket.write(send))
    socket.on("data", (chunk) => (received += chunk.toString("utf8")))
    socket.on("error", () => undefined)
    socket.on("close", () => resume(Effect.succeed({ received, closedAfterMs: performance.now() - started })))
    // never hangs the test: a server that keeps the connection is seen as "closed" after 10 s
    setTimeout(() => socket.destroy(), 10_000).unref()
  })

const listening = (port: number) =>
  Effect.promise(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.status)).pipe(
    Effect.catchAllDefect((e) => Effect.fail(e)),
    Effect.retry({ times: 200 }),
    Effect.orDie
  )

it("the Node server carries the limits (defaults: request 30 s, headers 10 s, keep-alive 65 s, 1,000 connections)", () => {
  const server = makeNodeServer(defaultHttpLimits)
  expect([server.requestTimeout, server.headersTimeout, server.keepAliveTimeout, server.maxConnections]).toEqual([30_000, 10_000, 65_000, 1_000])
  server.close()
})

it.scoped("a client that never finishes its headers gets 408 and is closed after headersTimeout; an idle kept-alive one after keepAliveTimeout", () =>
  Effect.gen(function* () {
    const port = yield* freePort
    yield* Layer.launch(serveRouter(router, { port, host: "127.0.0.1", limits })).pipe(Effect.forkScoped)
    yield* listening(port)

    const slow = yield* rawClient(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    expect(slow.received).toMatch(/^HTTP\/1\.1 408 /)
    expect(slow.closedAfterMs).toBeGreaterThanOrEqual(250)
    expect(slow.closedAfterMs).toBeLessThan(5_000)

    const idle = yield* rawClient(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
    expect(idle.received).toMatch(/^HTTP\/1\.1 200 /)
    expect(idle.closedAfterMs).toBeLessThan(5_000)
  })
)

it.scoped("connections beyond maxConnections are dropped at once", () =>
  Effect.gen(function* () {
    const port = yield* freePort
    yield* Layer.launch(serveRouter(router, { port, host: "127.0.0.1", limits: { ...limits, headersTimeout: Duration.seconds(5), requestTimeout: Duration.seconds(5) } })).pipe(
      Effect.forkScoped
    )
    yield* listening(port)
    // two connections held open (headers never finished), then a third
    const held = [0, 1].map(() => net.connect(port, "127.0.0.1", function (this: net.Socket) { this.write("GET / HTTP/1.1\r\n") }))
    yield* Effect.addFinalizer(() => Effect.sync(() => held.forEach((s) => s.destroy())))
    yield* Effect.promise(() => Promise.all(held.map((s) => new Promise((resolve) => s.once("ready", resolve)))))
    const third = yield* rawClient(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    expect(third.received).toBe("")
    expect(third.closedAfterMs).toBeLessThan(2_000)
  })
)
