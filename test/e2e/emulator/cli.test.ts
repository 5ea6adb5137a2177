import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { EmulatorAdminClient } from "../../../src/emulator/EmulatorAdminClient.js"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { dayOf, nextVersion, nextVersionSchema, pinnedVersion } from "../../support/apiVersions.js"
import { http, pkce, postForm } from "../../support/emulatorClient.js"

const bin = fileURLToPath(new URL("../../../bin/account-sync.mjs", import.meta.url))

/** Starts `account-sync emulator ...`; resolves with its stdout once it printed the last account line. */
const start = (args: ReadonlyArray<string>, accounts: number) =>
  Effect.acquireRelease(
    Effect.async<{ child: ChildProcess; stdout: () => string }, Error>((resume) => {
      const child = spawn(process.execPath, [bin, "emulator", ...args], { env: { ...process.env, LOG_FORMAT: "json" }, stdio: ["ignore", "pipe", "pipe"] })
      let out = ""
      let err = ""
      const timer = setTimeout(() => resume(Effect.fail(new Error(`emulator did not start within 60 s: ${out}${err}`))), 60_000)
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString()
        if (out.includes(`account ${accounts}:`)) {
          clearTimeout(timer)
          resume(Effect.succeed({ child, stdout: () => out }))
        }
      })
      child.stderr!.on("data", (c: Buffer) => (err += c.toString()))
      child.on("exit", (code) => {
        clearTimeout(timer)
        resume(Effect.fail(new Error(`emulator exited with ${code}: ${out}${err}`)))
      })
    }),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
  )

describe("account-sync emulator (CLI)", () => {
  it.scopedLive("serves one app and N accounts, prints them, walks a full flow over HTTP, and stops on SIGTERM", () =>
    Effect.gen(function* () {
      const redirect = "http://127.0.0.1:9/cb"
      const { child, stdout } = yield* start(
        ["--port", "0", "--client-id", "cli-client", "--client-secret", "cli-secret", "--redirect-uri", redirect, "--accounts", "2", "--jobs", "7", "--auto-approve", "--rotation", "--admin", "--max-points", "5000"],
        2
      )
      const text = stdout()
      const baseUrl = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(text)![1]!
      expect(text).toContain("client id cli-client")
      expect(text).not.toContain("cli-secret")
      const ids = [...text.matchAll(/account \d: id (\S+)/g)].map((m) => m[1]!)
      expect(ids).toHaveLength(2)

      const pair = pkce()
      const auth = yield* http(
        `${baseUrl}/api/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: "cli-client", redirect_uri: redirect, state: "xyz", code_challenge: pair.challenge, code_challenge_method: "S256", login_hint: ids[1]! })}`
      )
      expect(auth.status).toBe(302)
      const code = new URL(auth.headers.get("location")!).searchParams.get("code")!
      const tokens = yield* postForm(`${baseUrl}/api/oauth/token`, {
        grant_type: "authorization_code", client_id: "cli-client", client_secret: "cli-secret", code, redirect_uri: redirect, code_verifier: pair.verifier
      })
      expect(tokens.status).toBe(200)
      const jobs = yield* http(`${baseUrl}/api/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tokens.json.access_token}`, "X-SERVICE-GRAPHQL-VERSION": "2025-01-20" },
        body: JSON.stringify({ query: "{ account { id } jobs(first: 10) { nodes { jobNumber } } }" })
      })
      expect(jobs.json.data.account.id).toBe(ids[1])
      expect(jobs.json.data.jobs.nodes).toHaveLength(7)
      expect(jobs.json.extensions.cost.throttleStatus.maximumAvailable).toBe(5000)
      const rotated = yield* postForm(`${baseUrl}/api/oauth/token`, {
        grant_type: "refresh_token", client_id: "cli-client", client_secret: "cli-secret", refresh_token: tokens.json.refresh_token
      })
      expect(typeof rotated.json.refresh_token).toBe("string")
      const stats = yield* Effect.scoped(Effect.flatMap(EmulatorAdminClient.make(baseUrl), (admin) => admin.stats()))
      expect(stats.tokenRequests.refresh_token).toBe(1)

      const exit = yield* Effect.async<number | null>((resume) => {
        child.once("exit", (c) => resume(Effect.succeed(c)))
        child.kill("SIGTERM")
      })
      expect(exit).toBe(143)
    }),
    120_000
  )

  it.scopedLive("--api-version serves several API versions, each with its schema and removal date; a bad one is refused (exit 2)", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "emulator-versions-"))
      const schema = path.join(dir, "next.graphql")
      fs.writeFileSync(schema, nextVersionSchema())
      const removal = dayOf(Date.now() + 10 * 86_400_000)
      const { stdout } = yield* start(["--port", "0", "--admin", "--api-version", `${pinnedVersion},removed=${removal}`, "--api-version", `${nextVersion},schema=${schema}`], 1)
      expect(stdout()).toContain(`API versions: ${pinnedVersion} (removed ${removal}), ${nextVersion}`)
      const baseUrl = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout())![1]!
      const versions = yield* Effect.scoped(Effect.flatMap(EmulatorAdminClient.make(baseUrl), (admin) => admin.apiVersions()))
      expect(versions).toEqual({
        warnDays: 90,
        versions: [
          { version: pinnedVersion, removedAt: removal, status: "deprecated" },
          { version: nextVersion, status: "supported" }
        ]
      })

      const refused = yield* Effect.async<{ code: number | null; stderr: string }>((resume) => {
        const child = spawn(process.execPath, [bin, "emulator", "--port", "0", "--api-version", `${nextVersion},schema=${path.join(dir, "missing.graphql")}`], { stdio: ["ignore", "pipe", "pipe"] })
        let stderr = ""
        child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()))
        child.on("exit", (code) => resume(Effect.succeed({ code, stderr })))
      })
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain(`--api-version "${nextVersion},schema=${path.join(dir, "missing.graphql")}": cannot read the schema file`)
    }),
    120_000
  )

  it.scopedLive("with no options it serves defaults that are printed (client id, default secret, redirect URI)", () =>
    Effect.gen(function* () {
      const { stdout } = yield* start(["--port", "0"], 1)
      expect(stdout()).toContain("client id emulator-client, client secret emulator-secret (default), redirect URI http://127.0.0.1:8080/oauth/callback")
      expect(stdout()).toContain("admin API: off")
    }),
    120_000
  )
})
