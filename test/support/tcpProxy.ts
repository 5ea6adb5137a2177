import { Effect } from "effect"
import * as net from "node:net"
import type { AddressInfo } from "node:net"

/**
 * A TCP relay to `target` (host:port) that can stop forwarding: `stall` leaves every connection open but moves no byte
 * either way (a partitioned network, a switch dropping packets), `resume` delivers what waited. Closed with the scope.
 */
export const tcpProxy = (target: { readonly host: string; readonly port: number }) =>
  Effect.gen(function* () {
    let stalled = false
    const pairs = new Set<readonly [net.Socket, net.Socket]>()
    const server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host)
      const pair = [client, upstream] as const
      pairs.add(pair)
      const forward = (from: net.Socket, to: net.Socket) => {
        from.on("data", (chunk) => {
          if (!to.write(chunk)) from.pause()
        })
        to.on("drain", () => !stalled && from.resume())
      }
      forward(client, upstream)
      forward(upstream, client)
      if (stalled) for (const s of pair) s.pause()
      const close = () => {
        pairs.delete(pair)
        client.destroy()
        upstream.destroy()
      }
      client.on("close", close).on("error", close)
      upstream.on("close", close).on("error", close)
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () =>
        Effect.sync(() => {
          for (const pair of pairs) for (const s of pair) s.destroy()
          server.close()
        })
    )
    return {
      port: (server.address() as AddressInfo).port,
      stall: Effect.sync(() => {
        stalled = true
        for (const pair of pairs) for (const s of pair) s.pause()
      }),
      resume: Effect.sync(() => {
        stalled = false
        for (const pair of pairs) for (const s of pair) s.resume()
      })
    }
  })
