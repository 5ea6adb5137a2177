import { Effect, Layer, Runtime } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { ServiceUrl } from "./syncHarness.js"
import { TestEmulator, type TestEmulatorShape } from "./emulator.js"

/** A GraphQL request as the proxy saw it, and the answer the emulator gave (the hook may return another). */
export interface Exchange {
  readonly operationName: string | undefined
  readonly variables: Record<string, unknown>
  readonly answer: string
}

/**
 * A pass-through proxy in front of the emulator, for what the emulator itself does not do: `before` runs before a
 * GraphQL request is forwarded (e.g. changes the data under the pager), `variables` may change what is forwarded,
 * `after` may rewrite the answer (a broken service). The connector is pointed at it through the ServiceUrl.
 */
export const serviceProxy = (hooks: {
  readonly before?: (request: Omit<Exchange, "answer">, emulator: TestEmulatorShape) => Effect.Effect<void, unknown>
  /** The variables forwarded instead of the request's (a service that ignores some of them). */
  readonly variables?: (request: Omit<Exchange, "answer">) => Record<string, unknown>
  readonly after?: (exchange: Exchange, emulator: TestEmulatorShape) => string
}) =>
  Layer.scoped(
    ServiceUrl,
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const runPromise = Runtime.runPromise(yield* Effect.runtime<never>())
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        const forward = async (received: Buffer) => {
          let body = received
          const graphql = req.url === "/api/graphql" ? (JSON.parse(body.toString()) as { operationName?: string; variables?: Record<string, unknown> }) : undefined
          const request = graphql ? { operationName: graphql.operationName, variables: graphql.variables ?? {} } : undefined
          if (request && hooks.before) await runPromise(Effect.orDie(hooks.before(request, emulator)))
          if (request && hooks.variables) body = Buffer.from(JSON.stringify({ ...graphql, variables: hooks.variables(request) }))
          const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== "host" && k !== "content-length")) as Record<string, string>
          const upstream = await fetch(`${emulator.baseUrl}${req.url}`, { method: req.method!, headers, redirect: "manual", ...(body.length > 0 ? { body } : {}) })
          let text = await upstream.text()
          if (request && hooks.after) text = hooks.after({ ...request, answer: text }, emulator)
          const out: Record<string, string> = {}
          upstream.headers.forEach((v, k) => {
            if (k !== "content-length" && k !== "content-encoding" && k !== "transfer-encoding") out[k] = v
          })
          res.writeHead(upstream.status, out)
          res.end(text)
        }
        req.on("end", () => void forward(Buffer.concat(chunks)).catch((error: unknown) => {
          // the emulator's connection reset under the forwarded request (a kept-alive socket it closed meanwhile): the
          // connector gets what a gateway answers then, never an unhandled rejection in the test process
          if (res.headersSent) return void res.destroy()
          res.writeHead(502, { "content-type": "text/plain" })
          res.end(`proxy: the emulator did not answer (${error instanceof Error ? error.message : String(error)})`)
        }))
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.sync(() => server.close())
      )
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    })
  )

/**
 * A proxy of the service whose jobs lookups by id answer, while `broken` runs, a node the connector cannot accept (a
 * broken service): applying change events fails, the rest of the service answers as usual.
 */
export const brokenJobLookups = () => {
  let broken = false
  const proxy = serviceProxy({
    after: ({ variables, answer }) => {
      if (!broken || !(variables.filter as { ids?: unknown } | null)?.ids) return answer
      const body = JSON.parse(answer) as { data: { jobs: { nodes: Array<Record<string, unknown>> } } }
      for (const node of body.data.jobs.nodes) node.jobNumber = "not a number"
      return JSON.stringify(body)
    }
  })
  const whileBroken = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.suspend(() => ((broken = true), effect)).pipe(Effect.ensuring(Effect.sync(() => (broken = false))))
  return { proxy, whileBroken }
}
