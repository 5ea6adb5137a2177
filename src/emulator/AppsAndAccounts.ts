import type { AccountSpec, AppSpec } from "./EmulatorAdmin.js"
import { AdminRejected } from "./errors.js"
import { encodeId } from "./Ids.js"
import type { CursorMode } from "./data/cursors.js"
import type { RecordDefinition } from "./data/RecordDefinition.js"
import { scopesOf } from "./data/definitions.js"
import { collectionDefinitions, World } from "./data/World.js"
import type { VirtualClock } from "./VirtualClock.js"
import { webhookTopics } from "./webhookTopics.js"

/**
 * The apps and accounts the service knows, and each app's connection to each account. Grants.ts issues and checks
 * their codes and tokens; TokenInvalidation.ts holds the rules that end them. Synchronous and in memory.
 */

export interface App {
  readonly appId: string
  readonly clientId: string
  clientSecret: string
  /** Bumped by regenerateSecret; refresh tokens remember the generation they were issued under. */
  secretGeneration: number
  redirectUri: string
  webhookUrl: string | undefined
  /** Change topics sent to `webhookUrl` for every connected account without a subscription (tests, benchmarks). */
  webhookTopics: ReadonlyArray<string>
  scopes: ReadonlyArray<string>
  rotation: boolean
  name: string
  author: string
}

export interface Account {
  readonly accountId: string
  readonly name: string
  readonly adminUserId: string
  readonly adminEmail: string
  readonly adminName: string
  /** The account's records, every collection. */
  readonly world: World
  readonly seed: number
  /** The cursors its connections issue (default: AppsAndAccounts.cursorMode). */
  cursorMode: CursorMode | undefined
}

export interface Connection {
  status: "connected" | "disconnected"
  /** Access tokens carry the generation they were issued under; a disconnect bumps it so all of them die at once. */
  accessGeneration: number
}

const accountNames = [
  "Maple Leaf Landscaping", "Café Lumière Services", "Northside Snow & Lawn", "Crystal Clear Windows",
  "Bélanger Home Care", "Green Thumb Gardens", "Aurora Pressure Washing", "Østergaard Property Maintenance"
]

export class AppsAndAccounts {
  readonly apps = new Map<string, App>()
  private readonly appsByClientId = new Map<string, App>()
  readonly accounts = new Map<string, Account>()
  private readonly connections = new Map<string, Connection>()
  private appCounter = 0
  private accountCounter = 0
  /** The cursors connections issue unless an account says otherwise. */
  cursorMode: CursorMode = "offset"
  /** What an app asks for unless it says otherwise: every collection's scope. */
  private readonly defaultScopes: ReadonlyArray<string>

  constructor(
    private readonly clock: VirtualClock,
    private readonly baseUrl: () => string,
    /** Collection definitions every account's world takes over the defaults (by name): data sets of a test. */
    private readonly definitions: ReadonlyArray<RecordDefinition> = []
  ) {
    this.defaultScopes = scopesOf(collectionDefinitions(definitions))
  }

  createApp(spec: AppSpec): App {
    if (!spec.clientId || !spec.clientSecret) throw new AdminRejected({ reason: "createApp: clientId and clientSecret are required" })
    if (this.appsByClientId.has(spec.clientId)) throw new AdminRejected({ reason: `createApp: client id ${spec.clientId} already exists` })
    assertUrl("createApp: redirectUri", spec.redirectUri)
    if (spec.webhookUrl !== undefined) assertUrl("createApp: webhookUrl", spec.webhookUrl)
    if (spec.webhookTopics !== undefined) assertTopics("createApp: webhookTopics", spec.webhookTopics)
    const n = ++this.appCounter
    const app: App = {
      appId: encodeId("Application", n),
      clientId: spec.clientId,
      clientSecret: spec.clientSecret,
      secretGeneration: 1,
      redirectUri: spec.redirectUri,
      webhookUrl: spec.webhookUrl,
      webhookTopics: [...(spec.webhookTopics ?? [])],
      scopes: [...(spec.scopes ?? this.defaultScopes)],
      rotation: spec.rotation ?? false,
      name: spec.name ?? `Test App ${n}`,
      author: spec.author ?? "Account Sync Developers"
    }
    this.apps.set(app.appId, app)
    this.appsByClientId.set(app.clientId, app)
    return app
  }

  /** Draft-style edits of an app's settings (no tokens are touched). */
  updateApp(
    clientId: string,
    patch: { redirectUri?: string; webhookUrl?: string | null; rotation?: boolean; scopes?: ReadonlyArray<string>; webhookTopics?: ReadonlyArray<string> }
  ): App {
    const app = this.requireApp("updateApp", clientId)
    if (patch.redirectUri !== undefined) {
      assertUrl("updateApp: redirectUri", patch.redirectUri)
      app.redirectUri = patch.redirectUri
    }
    if (patch.webhookUrl !== undefined) {
      if (patch.webhookUrl !== null) assertUrl("updateApp: webhookUrl", patch.webhookUrl)
      app.webhookUrl = patch.webhookUrl ?? undefined
    }
    if (patch.rotation !== undefined) app.rotation = patch.rotation
    if (patch.scopes !== undefined) app.scopes = [...patch.scopes]
    if (patch.webhookTopics !== undefined) {
      assertTopics("updateApp: webhookTopics", patch.webhookTopics)
      app.webhookTopics = [...patch.webhookTopics]
    }
    return app
  }

  createAccount(spec: AccountSpec): Account {
    const n = ++this.accountCounter
    const accountId = spec.accountId ?? encodeId("Account", 1000 + n)
    if (this.accounts.has(accountId)) throw new AdminRejected({ reason: `createAccount: account ${accountId} already exists` })
    const name = spec.name ?? accountNames[(n - 1) % accountNames.length]! + (n > accountNames.length ? ` ${n}` : "")
    const seed = spec.seed ?? n * 7919
    const slug = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase() || `account-${n}`
    const now = this.clock.nowMs()
    const account: Account = {
      accountId,
      name,
      adminUserId: encodeId("User", 5000 + n),
      adminEmail: `admin@${slug}.example`,
      adminName: `Admin of ${name}`,
      seed,
      cursorMode: spec.cursorMode,
      world: new World({
        seed,
        idBase: n * 100_000_000,
        webBase: this.baseUrl(),
        nowMs: now,
        jobs: spec.jobs ?? 0,
        ...(spec.sizes ? { sizes: spec.sizes } : {}),
        ...(this.definitions.length > 0 ? { definitions: this.definitions } : {}),
        cursorMode: () => account.cursorMode ?? this.cursorMode
      })
    }
    this.accounts.set(accountId, account)
    return account
  }

  appByClientId(clientId: string): App | undefined {
    return this.appsByClientId.get(clientId)
  }

  requireApp(operation: string, clientId: string): App {
    const app = this.appsByClientId.get(clientId)
    if (!app) throw new AdminRejected({ reason: `${operation}: no app with client id ${clientId}` })
    return app
  }

  requireAccount(operation: string, accountId: string): Account {
    const account = this.accounts.get(accountId)
    if (!account) throw new AdminRejected({ reason: `${operation}: no account ${accountId}` })
    return account
  }

  /** The account an approval is for: by account id, admin user id or admin email. */
  findAccount(hint: string): Account | undefined {
    for (const a of this.accounts.values()) {
      if (a.accountId === hint || a.adminUserId === hint || a.adminEmail.toLowerCase() === hint.toLowerCase()) return a
    }
    return undefined
  }

  connection(appId: string, accountId: string): Connection {
    const key = `${appId}|${accountId}`
    let c = this.connections.get(key)
    if (!c) {
      c = { status: "disconnected", accessGeneration: 1 }
      this.connections.set(key, c)
    }
    return c
  }
}

const assertTopics = (what: string, topics: ReadonlyArray<string>) => {
  const unknown = topics.filter((t) => !webhookTopics().has(t))
  if (unknown.length > 0) throw new AdminRejected({ reason: `${what}: ${unknown.join(", ")} ${unknown.length === 1 ? "is not a" : "are not"} WebHookTopicEnum value${unknown.length === 1 ? "" : "s"}` })
}

export const assertUrl = (what: string, value: string) => {
  try {
    const u = new URL(value)
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error()
  } catch {
    throw new AdminRejected({ reason: `${what}: expected an absolute http(s) URL, got ${JSON.stringify(value)}` })
  }
}
