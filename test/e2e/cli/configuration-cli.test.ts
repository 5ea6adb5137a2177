import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli } from "../../support/cli.js"
import { TestDatabase, TestDatabaseLive } from "../../support/database.js"

const service = {
  SERVICE_BASE_URL: "http://127.0.0.1:9",
  SERVICE_CLIENT_ID: "cid",
  SERVICE_CLIENT_SECRET: "secret",
  SERVICE_REDIRECT_URI: "http://127.0.0.1:9/oauth/callback"
}
const key = { TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64") }

/** The lines a person reads: stderr without the JSON log lines. */
const said = (stderr: string) => stderr.split("\n").filter((l) => l.length > 0 && !l.startsWith("{"))

/** A data directory that does not exist yet: a command that fails on configuration must not create it. */
const freshDataDir = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "account-sync-config-")), "data")

layer(TestDatabaseLive, { timeout: 120_000 })("configuration and usage errors (the program)", (it) => {
  it.effect("missing keys: one line each naming the key and where to set it, exit 2, nothing created", () =>
    Effect.gen(function* () {
      const dataDir = freshDataDir()
      const result = yield* runCli(["sync"], { DATA_DIR: dataDir, LOG_LEVEL: "info" })
      expect(result.code).toBe(2)
      expect(said(result.stderr)).toEqual(
        ["SERVICE_BASE_URL", "SERVICE_CLIENT_ID", "SERVICE_CLIENT_SECRET", "SERVICE_REDIRECT_URI"].map((k) => `${k} is not set: put it in .env (see config/.env.example)`)
      )
      // no embedded database and no token key file were made for a run that could not start
      expect(fs.existsSync(dataDir)).toBe(false)
      const empty = yield* runCli(["sync"], { ...service, SERVICE_CLIENT_SECRET: "", DATA_DIR: dataDir })
      expect(said(empty.stderr)).toEqual(["SERVICE_CLIENT_SECRET is empty: put it in .env (see config/.env.example)"])
      expect(fs.existsSync(dataDir)).toBe(false)
    })
  )

  it.effect("a key that needs another, a malformed URL or value: the key, what is wrong, the expected form; exit 2", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const cases: Array<[Record<string, string>, Array<string>, string]> = [
        [
          { ...env, ...service },
          ["sync"],
          "TOKEN_ENCRYPTION_KEY is not set: DATABASE_URL is set, so the tokens need a key of your own: generate one with `openssl rand -base64 32` and put it in .env (see config/.env.example)"
        ],
        [
          { ...env, ...service, ...key, DATABASE_URL: "notaurl" },
          ["sync"],
          "DATABASE_URL is invalid (in .env or the environment): expected a postgres:// URL, e.g. postgres://user:password@host:5432/database"
        ],
        [
          { ...env, DATABASE_URL: "mysql://u:p@db/x" },
          ["status"],
          "DATABASE_URL is invalid (in .env or the environment): expected a postgres:// URL, e.g. postgres://user:password@host:5432/database (this one starts with mysql://)"
        ],
        [
          { ...env, QUERY_DATABASE_URL: "postgres:///nohost" },
          ["query", "SELECT 1"],
          "QUERY_DATABASE_URL is invalid (in .env or the environment): the URL names no host, e.g. postgres://user:password@host:5432/database"
        ],
        [{ ...env, ...service, ...key, SERVICE_BASE_URL: "notaurl" }, ["sync"], "SERVICE_BASE_URL is invalid (in .env or the environment): expected an absolute http(s) URL, e.g. https://api.example.com"],
        [
          { ...env, ...service, ...key, SYNC_FULL_PASS_EVERY: "daily" },
          ["sync"],
          'SYNC_FULL_PASS_EVERY is invalid (in .env or the environment): expected a duration such as "30 seconds", "6 hours" or "1 day", got "daily"'
        ],
        [
          { ...env, ...service, ...key, GRAPHQL_REQUEST_TIMEOUT: "-5 seconds" },
          ["sync"],
          "GRAPHQL_REQUEST_TIMEOUT is invalid (in .env or the environment): expected a duration above zero, e.g. 10 seconds"
        ],
        [{ ...env, LOG_LEVEL: "verbose" }, ["status"], 'LOG_LEVEL is invalid (in .env or the environment): expected one of all, trace, debug, info, warn, error, fatal, off, got "verbose"'],
        [{ ...env, ...service, ...key, PORT: "70000" }, ["serve"], 'PORT is invalid (in .env or the environment): expected a port number from 1 to 65535, got "70000"']
      ]
      for (const [settings, command, line] of cases) {
        const result = yield* runCli(command, settings)
        expect(result.code, `${command.join(" ")}: ${result.stderr}`).toBe(2)
        expect(said(result.stderr), command.join(" ")).toEqual([line])
        // a secret in a URL is never echoed
        expect(result.stderr).not.toContain("u:p@")
      }
    })
  )

  it.effect("bad flags: the flag, the value and what is valid, exit 2, before anything is opened", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const dataDir = freshDataDir()
      const embedded = { ...service, DATA_DIR: dataDir }
      const stream = yield* runCli(["sync", "--stream", "nope"], embedded)
      expect([stream.code, said(stream.stderr)]).toEqual([2, ["--stream nope: no such stream; the streams are users, products, clients, properties, requests, quotes, jobs, visits, invoices"]])
      const port = yield* runCli(["serve", "--port", "70000"], embedded)
      expect([port.code, said(port.stderr)]).toEqual([2, ["--port 70000: expected a port from 0 to 65535 (0: any free port)"]])
      const emulatorPort = yield* runCli(["emulator", "--port", "-1"], {})
      expect([emulatorPort.code, said(emulatorPort.stderr)]).toEqual([2, ["--port -1: expected a port from 0 to 65535 (0: any free port)"]])
      const timeout = yield* runCli(["connect", "--timeout", "-5"], embedded)
      expect([timeout.code, said(timeout.stderr)]).toEqual([2, ["--timeout -5: expected a whole number of seconds of at least 1"]])
      const concurrency = yield* runCli(["backfill", "--concurrency", "0"], embedded)
      expect([concurrency.code, said(concurrency.stderr)]).toEqual([2, ["--concurrency: expected a whole number of at least 1"]])
      expect(fs.existsSync(dataDir)).toBe(false)

      // --account needs the connections: an empty value, and a value that names none, list what it could be
      const withDb = { ...env, ...service, ...key }
      const emptyAccount = yield* runCli(["sync", "--account", ""], withDb)
      expect([emptyAccount.code, said(emptyAccount.stderr)]).toEqual([2, ["--account: expected an account id or name, got an empty value"]])
      const unknown = yield* runCli(["backfill", "--account", "Nope Ltd"], withDb)
      expect([unknown.code, said(unknown.stderr)]).toEqual([2, ["--account Nope Ltd: no connected account has this id or name; no account is connected (connect one with `account-sync connect`)"]])
    })
  )

  it.effect("--help into a pipe: plain text, exit 0, nothing opened", () =>
    Effect.gen(function* () {
      const dataDir = freshDataDir()
      for (const args of [["--help"], [], ["sync", "--help"], ["webhooks", "subscribe", "-h"]]) {
        const help = yield* runCli(args, { DATA_DIR: dataDir })
        expect(help.code, args.join(" ")).toBe(0)
        expect(help.stdout).toMatch(/^account-sync /)
        expect(help.stdout).not.toMatch(/\x1b\[/)
      }
      expect(fs.existsSync(dataDir)).toBe(false)
    })
  )

  it.effect("--log-level before or after the command sets the level of that run", () =>
    Effect.gen(function* () {
      const { env } = yield* TestDatabase
      const before = yield* runCli(["--log-level", "warn", "status"], env)
      expect(before.code, before.stderr).toBe(0)
      expect(before.stderr).not.toContain('"logLevel":"DEBUG"')
      const after = yield* runCli(["status", "--log-level=debug"], { ...env, LOG_LEVEL: "error" })
      expect(after.code, after.stderr).toBe(0)
      expect(after.stderr).toContain('"logLevel":"DEBUG"')
    })
  )
})
