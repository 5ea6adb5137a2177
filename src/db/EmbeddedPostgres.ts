import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Data, Effect, type Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type DataDirInUse, holdDataDir } from "./dataDirLock.js"
import { openEmbeddedDatabase } from "./embeddedTemplate.js"
import { restrictToOwner } from "./ownerOnly.js"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly dataDir: string
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EmbeddedPostgres {
  /** The directory (mode 0700) of its Unix socket: what `pg` takes as `host`. */
  readonly host: string
  readonly port: number
  readonly dataDir: string
  /** A connection string for it (`?host=` the socket's directory). */
  readonly url: string
}

/** Postgres clients look for the socket `.s.PGSQL.<port>` in the directory they are given as host. */
const socketPort = 5432

/**
 * The socket's own directory, private to this user (mkdtemp makes it 0700), removed with the scope: PGlite has no
 * authentication, every connection is its superuser, so the socket must not be reachable by anyone else (a TCP port
 * on 127.0.0.1 would be, by every local user).
 */
const privateSocketDirectory = (fail: (message: string) => (cause: unknown) => EmbeddedPostgresError) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "account-sync-pg-"))
        fs.chmodSync(dir, 0o700)
        return dir
      },
      catch: fail("cannot create the directory of the embedded Postgres socket")
    }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/**
 * An embedded Postgres (PGlite) behind a local socket server, so the same `pg` client talks to it as to a
 * real server. A scoped resource: the server and the database close when the scope does.
 * PGlite is one session multiplexed over many connections: a connection that holds a transaction makes the
 * others wait (isolation holds), advisory locks do not exclude anything, and session settings are shared.
 *
 * One process at a time opens a data directory (holdDataDir): a second fails at once, naming the first.
 * Only this OS user reaches it: the socket is a Unix socket in a 0700 directory of its own, and the data files are
 * the user's alone (directories 0700, files 0600; PGlite itself makes them 0666).
 * `readOnly`: the database must exist already, nothing is created, and its one session is read-only from the start
 * (what `query` opens).
 */
export const startEmbeddedPostgres = (options: {
  readonly dataDir: string | "memory"
  readonly searchPath: string
  readonly maxConnections?: number
  readonly readOnly?: boolean
}): Effect.Effect<EmbeddedPostgres, EmbeddedPostgresError | DataDirInUse, Scope.Scope> =>
  Effect.gen(function* () {
    const { dataDir } = options
    const fail = (message: string) => (cause: unknown) => new EmbeddedPostgresError({ dataDir, message, cause })
    if (dataDir !== "memory") {
      if (options.readOnly && !fs.existsSync(path.join(dataDir, "PG_VERSION"))) {
        return yield* Effect.fail(
          new EmbeddedPostgresError({ dataDir, message: `no embedded database in ${dataDir} yet (run \`account-sync migrate\`, or sync, first)` })
        )
      }
      yield* Effect.try({ try: () => fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 }), catch: fail("cannot create the data directory") })
      yield* Effect.try({ try: () => restrictToOwner(dataDir), catch: fail("cannot restrict the data directory to its owner") })
      // one process at a time: PGlite has no lock of its own, and a second one's writes undo the first's
      yield* holdDataDir(dataDir)
    }
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => openEmbeddedDatabase(dataDir), catch: fail("cannot open the embedded database") }),
      (db) =>
        Effect.promise(() => db.close()).pipe(
          Effect.ignore,
          // the files PGlite made while open are 0666 too
          Effect.zipRight(dataDir === "memory" ? Effect.void : Effect.try(() => restrictToOwner(dataDir)).pipe(Effect.ignore))
        )
    )
    if (dataDir !== "memory") {
      yield* Effect.try({ try: () => restrictToOwner(dataDir), catch: fail("cannot restrict the data files to their owner") })
    }
    const schema = options.searchPath.split(",")[0]!.trim()
    yield* Effect.tryPromise({
      try: () =>
        db.exec(
          options.readOnly
            ? `SET search_path TO ${options.searchPath}; SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY;`
            : `CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${options.searchPath};`
        ),
      catch: fail("cannot prepare the embedded database")
    })
    const socketDir = yield* privateSocketDirectory(fail)
    const server = new PGLiteSocketServer({ db, path: path.join(socketDir, `.s.PGSQL.${socketPort}`), maxConnections: options.maxConnections ?? 16 })
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => server.start(), catch: fail("cannot start the embedded Postgres socket server") }),
      () => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    return {
      host: socketDir,
      port: socketPort,
      dataDir,
      url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`
    }
  })
