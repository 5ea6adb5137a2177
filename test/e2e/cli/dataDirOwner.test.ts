import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli, spawnCli } from "../../support/cli.js"
import { connectorEnv, freePort } from "../../support/connector.js"
import { EmulatorTest, TestEmulator } from "../../support/emulator.js"

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { redirect: "manual" })
    return response.status
  })

/**
 * `serve` on an embedded DATA_DIR, started by `script` as typed, once it answers /healthz (a fresh PGlite and its
 * migrations: 10-45 s on a loaded two-CPU machine, so up to two minutes).
 */
const serveUp = (env: Record<string, string>, port: number, script?: string) =>
  Effect.gen(function* () {
    const serve = yield* spawnCli(["serve", "--port", String(port), "--host", "127.0.0.1"], env, script)
    const health = yield* get(`http://127.0.0.1:${port}/healthz`).pipe(
      Effect.catchAllDefect((e) => Effect.fail(e)),
      Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.intersect(Schedule.recurs(600)))),
      Effect.orDie
    )
    expect(health).toBe(200)
    return serve
  })

// The embedded database (no DATABASE_URL) in a DATA_DIR of the test's own: serve, then other commands beside it
layer(EmulatorTest({ accounts: 1 }), { timeout: 150_000, excludeTestServices: true })("one owner per embedded DATA_DIR", (it) => {
  it.scoped("a second process on a DATA_DIR in use fails at once naming the owner (exit 2); the owner's data stays; a dead owner's lock is taken over", () =>
    Effect.gen(function* () {
      const dataDir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "data-dir-owner-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const port = yield* freePort
      const env = { ...connectorEnv(yield* TestEmulator), DATA_DIR: dataDir, LOG_LEVEL: "warn" }
      const startServe = serveUp(env, port)

      const serve = yield* startServe
      // serve commits a pending flow
      expect(yield* get(`http://127.0.0.1:${port}/oauth/start`)).toBe(302)
      const inUse = `account-sync: DATA_DIR ${path.join(dataDir, "pg")} is in use by process ${serve.child.pid} (account-sync serve --port ${port} --host 127.0.0.1); stop it first, or set DATABASE_URL to share a Postgres server\n`
      for (const command of [["status"], ["backfill"], ["query", "SELECT 1"]]) {
        const second = yield* runCli(command, env)
        expect(second.code, command.join(" ")).toBe(2)
        expect(second.stderr, command.join(" ")).toBe(inUse)
      }
      expect(yield* get(`http://127.0.0.1:${port}/oauth/start`)).toBe(302)
      serve.child.kill("SIGTERM")
      expect((yield* serve.exit).code).toBe(143)
      expect(fs.existsSync(path.join(dataDir, "pg.lock"))).toBe(false)

      // what serve committed is there once it has stopped
      const pending = yield* runCli(["query", "--json", "SELECT count(*)::int AS n FROM oauth_pending"], env)
      expect(pending.code, pending.stderr).toBe(0)
      expect(JSON.parse(pending.stdout)).toEqual([{ n: 2 }])

      // an owner killed outright leaves its lock behind: the next process takes it over
      const killed = yield* startServe
      killed.child.kill("SIGKILL")
      yield* killed.exit
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, "pg.lock"), "utf8")).pid).toBe(killed.child.pid)
      const after = yield* runCli(["query", "--json", "SELECT count(*)::int AS n FROM oauth_pending"], env)
      expect(after.code, after.stderr).toBe(0)
      expect(JSON.parse(after.stdout)).toEqual([{ n: 2 }])
      expect(fs.existsSync(path.join(dataDir, "pg.lock"))).toBe(false)
    }),
    // seven processes, each opening the embedded database (several seconds each on a loaded machine)
    360_000
  )

  it.scoped("the owner holds however it was started: a relative script path, a symbolic link; a second process is refused within 5 s naming it", () =>
    Effect.gen(function* () {
      const dataDir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "data-dir-owner-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const link = path.join(dataDir, "account-sync")
      fs.symlinkSync(path.resolve(import.meta.dirname, "../../../bin/account-sync.mjs"), link)
      const env = { ...connectorEnv(yield* TestEmulator), DATA_DIR: path.join(dataDir, "data"), LOG_LEVEL: "warn" }
      // as `npm run demo` starts it (the path typed, relative to the repository's root), and as npx does (a link)
      for (const script of ["bin/account-sync.mjs", link]) {
        const port = yield* freePort
        const owner = yield* serveUp(env, port, script)
        // within 5 s of what a process of the program takes to start on this machine now (--version: 1 s idle, 8 s
        // and more on a loaded two-CPU machine), rather than a bound the load alone can break
        const timed = <A>(run: Effect.Effect<A>) => Effect.map(Effect.timed(run), ([took, result]) => [Duration.toMillis(took), result] as const)
        const [startMs] = yield* timed(runCli(["--version"], env))
        const [secondMs, second] = yield* timed(runCli(["migrate"], env))
        expect(second.code, `${script}: ${second.stderr}`).toBe(2)
        expect(second.stderr, script).toBe(
          `account-sync: DATA_DIR ${path.join(env.DATA_DIR, "pg")} is in use by process ${owner.child.pid} (account-sync serve --port ${port} --host 127.0.0.1); stop it first, or set DATABASE_URL to share a Postgres server\n`
        )
        expect(secondMs - startMs, `${script}: ${secondMs} ms against ${startMs} ms for --version`).toBeLessThan(5_000)
        owner.child.kill("SIGTERM")
        expect((yield* owner.exit).code, script).toBe(143)
      }
    }),
    360_000
  )
})
