import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Data, Effect } from "effect"
import * as fs from "node:fs"
import type { AddressInfo } from "node:net"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly dataDir: string
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EmbeddedPostgres {
  readonly host: string
  readonly port: number
  readonly dataDir: string
}

/**
 * An embedded Postgres (PGlite) behind a local socket server, so the same `pg` client talks to it as to a
 * real server. A scoped resource: the server and the database close when the scope does.
 * PGlite is one session multiplexed over many connections: a connection that holds a transaction makes the
 * others wait (isolation holds), advisory locks do not exclude anything, and session settings are shared.
 */
export const startEmbeddedPostgres = (options: {
  readonly dataDir: string | "memory"
  readonly searchPath: string
  readonly maxConnections?: number
}): Effect.Effect<EmbeddedPostgres, EmbeddedPostgresError, import("effect").Scope.Scope> =>
  Effect.gen(function* () {
    const { dataDir } = options
    const fail = (message: string) => (cause: unknown) => new EmbeddedPostgresError({ dataDir, message, cause })
    if (dataDir !== "memory") {
      yield* Effect.try({ try: () => fs.mkdirSync(dataDir, { recursive: true }), catch: fail("cannot create the data directory") })
    }
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create(dataDir === "memory" ? undefined : dataDir),
        catch: fail("cannot open the embedded database (is another account-sync process using the same DATA_DIR?)")
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const schema = options.searchPath.split(",")[0]!.trim()
    yield* Effect.tryPromise({
      try: () => db.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${options.searchPath};`),
      catch: fail("cannot prepare the embedded database")
    })
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: options.maxConnections ?? 16 })
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => server.start(), catch: fail("cannot start the embedded Postgres socket server") }),
      () => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    const address = (server as unknown as { server: { address(): AddressInfo } }).server.address()
    return { host: "127.0.0.1", port: address.port, dataDir: dataDir }
  })
