import { Duration, Effect, type Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import { fileURLToPath } from "node:url"
import type { EmulatorAdmin } from "../../src/emulator/EmulatorAdmin.js"
import { EmulatorAdminClient } from "../../src/emulator/EmulatorAdminClient.js"
import { BenchError } from "./errors.js"

/** `bin/account-sync.mjs`: the one entry point both the emulator child and connector children run. */
export const binPath = fileURLToPath(new URL("../../bin/account-sync.mjs", import.meta.url))

/** The node flags the program is started with wherever it ships (bin's shebang, the Dockerfile, `npm run demo`). */
export const nodeArgs: ReadonlyArray<string> = ["--max-semi-space-size=8", "--v8-pool-size=2", "--heap-growing-percent=30"]

/** What bin's shebang sets in the environment of the program it starts (glibc's malloc arenas and mmap threshold). */
export const nodeEnv: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072" }

export interface EmulatorProcess {
  readonly baseUrl: string
  readonly admin: EmulatorAdmin
  readonly clientId: string
  /** The app's id, which its webhooks carry as `appId`. */
  readonly appId: string
  readonly clientSecret: string
  readonly redirectUri: string
  readonly pid: number
}

export interface EmulatorProcessOptions {
  readonly rotation?: boolean
  readonly maxPoints?: number
  readonly restoreRate?: number
}

const START_TIMEOUT = Duration.seconds(60)

/**
 * `account-sync emulator --admin --port 0` in its own process (so its CPU is not the connector's), one app with
 * random credentials and no accounts; driven over HTTP with EmulatorAdminClient. Killed when the scope closes.
 */
export const startEmulatorProcess = (options: EmulatorProcessOptions = {}): Effect.Effect<EmulatorProcess, BenchError, Scope.Scope> =>
  Effect.gen(function* () {
    const clientId = `bench_${crypto.randomBytes(4).toString("hex")}`
    const clientSecret = `secret_${crypto.randomBytes(18).toString("base64url")}`
    const redirectUri = "http://127.0.0.1:8080/oauth/callback"
    const args = [
      binPath, "emulator", "--port", "0", "--admin", "--accounts", "0", "--auto-approve",
      "--client-id", clientId, "--client-secret", clientSecret, "--redirect-uri", redirectUri,
      ...(options.rotation ? ["--rotation"] : []),
      ...(options.maxPoints !== undefined ? ["--max-points", String(options.maxPoints)] : []),
      ...(options.restoreRate !== undefined ? ["--restore-rate", String(options.restoreRate)] : [])
    ]
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, args, { env: { ...process.env, LOG_LEVEL: "WARN" }, stdio: ["ignore", "pipe", "pipe"] })),
      (child) => stopChild(child)
    )
    const started = yield* Effect.async<{ baseUrl: string; appId: string }, BenchError>((resume) => {
      let out = ""
      let err = ""
      const onOut = (chunk: Buffer) => {
        out += chunk.toString()
        const m = /serving (http:\/\/[^\s]+)/.exec(out)
        const app = /app: id ([^\s,]+)/.exec(out)
        if (m && app) {
          child.stdout!.off("data", onOut)
          child.stdout!.resume()
          resume(Effect.succeed({ baseUrl: m[1]!, appId: app[1]! }))
        }
      }
      child.stdout!.on("data", onOut)
      child.stderr!.on("data", (c: Buffer) => void (err = (err + c.toString()).slice(-2000)))
      child.once("exit", (code) => resume(Effect.fail(new BenchError({ step: "emulator start", reason: `exited with ${code}: ${err}` }))))
    }).pipe(
      Effect.timeoutFail({
        duration: START_TIMEOUT,
        onTimeout: () => new BenchError({ step: "emulator start", reason: "no 'serving <url>' line within 60 s" })
      })
    )
    const { baseUrl, appId } = started
    return { baseUrl, admin: yield* EmulatorAdminClient.make(baseUrl), clientId, appId, clientSecret, redirectUri, pid: child.pid ?? -1 }
  })

/** SIGTERM, then SIGKILL after 5 s. */
export const stopChild = (child: ChildProcess): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })
