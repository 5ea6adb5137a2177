import { Context, Effect, Layer, type Scope } from "effect"
import * as crypto from "node:crypto"
import { Emulator, type EmulatorStartError } from "../../src/emulator/Emulator.js"
import type { RecordDefinition } from "../../src/emulator/data/RecordDefinition.js"
import type { EmulatorAdmin, Limits } from "../../src/emulator/EmulatorAdmin.js"
import type { WebhookRetryOptions } from "../../src/emulator/Webhooks.js"
import { registerSecret } from "./secretScan.js"

/** An emulator in process on a random port: one app (random credentials), N accounts with M jobs, admin enabled. */

export interface EmulatorTestOptions {
  /** The app's OAuth Callback URL; default `http://127.0.0.1:0/oauth/callback` (change later with admin.updateApp). */
  readonly redirectUri?: string
  readonly webhookUrl?: string
  readonly rotation?: boolean
  readonly scopes?: ReadonlyArray<string>
  /** Accounts to create (default 1). */
  readonly accounts?: number
  /** Seeded jobs per account (default 0). */
  readonly jobs?: number
  /** Records per collection of each account, over the sizes that scale with `jobs`. */
  readonly sizes?: Readonly<Record<string, number>>
  /** Collection definitions that replace the default data set of a root field (EmulatorOptions.definitions). */
  readonly definitions?: ReadonlyArray<RecordDefinition>
  /** Authorization endpoint answers at once for the first account (or login_hint). Default true. */
  readonly autoApprove?: boolean
  readonly limits?: Limits
  readonly webhookRetry?: WebhookRetryOptions
  /** Serve /__admin over HTTP too (default true). */
  readonly httpAdmin?: boolean
}

export interface TestEmulatorShape {
  readonly baseUrl: string
  readonly admin: EmulatorAdmin
  readonly app: {
    readonly appId: string
    readonly clientId: string
    readonly clientSecret: string
    readonly redirectUri: string
    readonly webhookUrl?: string
  }
  readonly accounts: ReadonlyArray<{ readonly accountId: string; readonly name: string; readonly adminUserId: string }>
}

export class TestEmulator extends Context.Tag("test/TestEmulator")<TestEmulator, TestEmulatorShape>() {}

export const makeTestEmulator = (options: EmulatorTestOptions = {}): Effect.Effect<TestEmulatorShape, EmulatorStartError, Scope.Scope> =>
  Effect.gen(function* () {
    const emulator = yield* Emulator.make({
      admin: options.httpAdmin ?? true,
      approval: { mode: options.autoApprove === false ? "manual" : "auto" },
      ...(options.limits ? { limits: options.limits } : {}),
      webhookRetry: options.webhookRetry ?? { attempts: 4, baseDelayMs: 50, timeoutMs: 2000 },
      ...(options.definitions ? { definitions: options.definitions } : {})
    })
    const clientId = `client_${crypto.randomBytes(6).toString("hex")}`
    const clientSecret = `secret_${crypto.randomBytes(18).toString("base64url")}`
    registerSecret(clientSecret)
    const redirectUri = options.redirectUri ?? "http://127.0.0.1:0/oauth/callback"
    const { appId } = yield* emulator.admin
      .createApp({
        clientId,
        clientSecret,
        redirectUri,
        ...(options.webhookUrl ? { webhookUrl: options.webhookUrl } : {}),
        ...(options.scopes ? { scopes: options.scopes } : {}),
        rotation: options.rotation ?? false
      })
      .pipe(Effect.orDie)
    const accounts = []
    for (let i = 0; i < (options.accounts ?? 1); i++) {
      accounts.push(yield* emulator.admin.createAccount({ jobs: options.jobs ?? 0, ...(options.sizes ? { sizes: options.sizes } : {}) }).pipe(Effect.orDie))
    }
    return {
      baseUrl: emulator.baseUrl,
      admin: emulator.admin,
      app: { appId, clientId, clientSecret, redirectUri, ...(options.webhookUrl ? { webhookUrl: options.webhookUrl } : {}) },
      accounts
    }
  })

export const EmulatorTest = (options: EmulatorTestOptions = {}): Layer.Layer<TestEmulator, EmulatorStartError> =>
  Layer.scoped(TestEmulator, makeTestEmulator(options))

/** Same, with options computed first (e.g. a redirectUri on the port a callback listener just bound). */
export const EmulatorTestWith = <E, R>(options: Effect.Effect<EmulatorTestOptions, E, R>): Layer.Layer<TestEmulator, E | EmulatorStartError, Exclude<R, Scope.Scope>> =>
  Layer.scoped(TestEmulator, Effect.flatMap(options, makeTestEmulator))
