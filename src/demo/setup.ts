import { Effect } from "effect"
import pg from "pg"
import * as net from "node:net"

/** What the demo sets up around the program: a port for `serve`, a schema started from scratch, a browser's redirect hops. */

export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** The demo starts its schema from scratch on a real Postgres (never the production schema: see cli). */
export const dropSchema = (url: string, schema: string) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
    (client) => Effect.promise(() => client.end())
  )

/** Follows one redirect hop without following it further: what a browser would be sent to next. */
export const nextHop = (url: string) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(10_000) })
      const body = await response.text()
      return { status: response.status, location: response.headers.get("location"), body }
    },
    catch: (cause) => new Error(`demo browser: GET ${url} failed: ${String(cause)}`)
  })
