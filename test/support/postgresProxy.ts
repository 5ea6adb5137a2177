import { Effect } from "effect"
import * as net from "node:net"

/** A TCP proxy in front of a Postgres, which a test can cut: the Postgres stops answering for the program only. */
export interface PostgresProxy {
  /** `url` with its host and port replaced by the proxy's (user, password, database and options kept). */
  readonly through: (url: string) => string
  /** Every open connection reset and no new one accepted (ECONNREFUSED), as when a server stops. */
  readonly cut: Effect.Effect<void>
}

/** A proxy to `url`'s host and port on a free local port; closed with the scope. */
export const postgresProxy = (url: string) =>
  Effect.gen(function* () {
    const target = new URL(url)
    const sockets = new Set<net.Socket>()
    const server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname)
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on("error", () => {})
        s.on("close", () => sockets.delete(s))
      }
      client.pipe(upstream)
      upstream.pipe(client)
      client.on("close", () => upstream.destroy())
      upstream.on("close", () => client.destroy())
    })
    const cut = Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      for (const s of sockets) s.resetAndDestroy()
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () => (server.listening ? cut : Effect.void)
    )
    const port = (server.address() as net.AddressInfo).port
    return {
      through: (given: string) => {
        const out = new URL(given)
        out.hostname = "127.0.0.1"
        out.port = String(port)
        return out.toString()
      },
      cut
    } satisfies PostgresProxy
  })
