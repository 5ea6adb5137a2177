import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Connections } from "../../../src/auth/Connections.js"
import { OAuthClient } from "../../../src/auth/OAuthClient.js"
import { connectionsTable } from "../../../src/cli/status.js"
import { TokenStore } from "../../../src/auth/TokenStore.js"
import { approveInBrowser } from "../../support/browser.js"
import { AuthTest, freePort, TestSettings } from "../../support/connector.js"
import { TestDatabase, TestDatabaseEnv } from "../../support/database.js"
import { EmulatorTestWith, TestEmulator } from "../../support/emulator.js"
import { runCli, spawnCli } from "../../support/cli.js"
import { assertNoSecretsIn } from "../../support/auth.js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const waitFor = async (done: () => boolean) => {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 50))
}

const Stack = AuthTest().pipe(
  Layer.provideMerge(EmulatorTestWith(Effect.map(freePort, (port) => ({ redirectUri: `http://127.0.0.1:${port}/callback`, accounts: 4 })))),
  Layer.provideMerge(TestDatabaseEnv)
)

const cliEnv = TestSettings

const withHint = (url: string, accountId: string) => {
  const u = new URL(url)
  u.searchParams.set("login_hint", accountId)
  return u.toString()
}
const fetchPage = (url: string) =>
  Effect.promise(async () => {
    const res = await fetch(url, { redirect: "manual" })
    return { status: res.status, body: await res.text() }
  })

/** Every secret a CLI run could leak: the client secret and the stored tokens. */
const secrets = Effect.gen(function* () {
  const settings = yield* OAuthClient
  const emulator = yield* TestEmulator
  const store = yield* TokenStore
  const values = [Redacted.value(settings.clientSecret), (yield* TestSettings).TOKEN_ENCRYPTION_KEY!]
  for (const { accountId } of emulator.accounts) {
    const stored = yield* store.read(accountId)
    if (Option.isSome(stored)) {
      values.push(Redacted.value(stored.value.accessToken))
      Option.map(stored.value.refreshToken, (r) => values.push(Redacted.value(r)))
    }
  }
  return values
})

/** `connect` as a user runs it: read the URL it prints, approve in the browser, follow the redirect to it. */
const connectWithCli = (accountId: string, extraArgs: ReadonlyArray<string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const child = yield* spawnCli(["connect", "--timeout", "60", ...extraArgs], yield* cliEnv)
      const url = yield* child.firstLine
      const consent = yield* approveInBrowser(withHint(url, accountId), { accountId })
      const landing = yield* fetchPage(consent.location!)
      return { url: new URL(url), landing, result: yield* child.exit }
    })
  )

layer(Stack, { excludeTestServices: true })("connect, status and disconnect commands (child processes)", (it) => {
  it.effect("connect (PKCE): prints the URL, takes the redirect, stores the connection, prints connected <name> (<id>)", () =>
    Effect.gen(function* () {
      const acc = (yield* TestEmulator).accounts[0]!
      const settings = yield* OAuthClient
      const { url, landing, result } = yield* connectWithCli(acc.accountId, [])
      expect(url.searchParams.get("code_challenge_method")).toBe("S256")
      expect(url.searchParams.get("redirect_uri")).toBe(settings.redirectUri)
      expect(landing.status).toBe(200)
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(`connected ${acc.name} (${acc.accountId})`)
      expect(Option.getOrThrow(yield* (yield* Connections).get(acc.accountId)).status).toBe("active")
      yield* assertNoSecretsIn([result.stdout, result.stderr], yield* secrets)
    })
  )

  it.effect("connect --no-pkce", () =>
    Effect.gen(function* () {
      const acc = (yield* TestEmulator).accounts[1]!
      const { url, result } = yield* connectWithCli(acc.accountId, ["--no-pkce"])
      expect(url.searchParams.has("code_challenge")).toBe(false)
      expect(url.searchParams.has("state")).toBe(true)
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(`connected ${acc.name} (${acc.accountId})`)
      yield* assertNoSecretsIn([result.stdout, result.stderr], yield* secrets)
    })
  )

  it.effect("denial leaves no redirect: connect gives up after --timeout, says so, exits non-zero; a wrong state is refused", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const emulator = yield* TestEmulator
        const acc = emulator.accounts[2]!
        const settings = yield* OAuthClient
        // the admin sees the consent page (no auto-approval) and clicks Deny
        yield* emulator.admin.setApproval({ mode: "manual" })
        yield* Effect.addFinalizer(() => Effect.orDie(emulator.admin.setApproval({ mode: "auto" })))
        const child = yield* spawnCli(["connect", "--timeout", "3"], yield* cliEnv)
        const url = yield* child.firstLine
        const wrong = yield* fetchPage(`${settings.redirectUri}?code=stolen&state=not-ours`)
        expect(wrong.status).toBe(400)
        expect(wrong.body).toContain("state mismatch")
        const denied = yield* approveInBrowser(withHint(url, acc.accountId), { accountId: acc.accountId, deny: true })
        expect(denied.location).toBeNull()
        const result = yield* child.exit
        expect(result.code).toBe(1)
        expect(result.stderr).toContain("no authorization arrived within 3s")
        expect(Option.isNone(yield* (yield* Connections).get(acc.accountId))).toBe(true)
      })
    )
  )

  it.effect("connect against an app whose callback is not SERVICE_REDIRECT_URI says what the service answered at once (exit 2), not after its timeout", () =>
    Effect.gen(function* () {
      const other = `http://127.0.0.1:${yield* freePort}/elsewhere`
      const started = Date.now()
      const result = yield* runCli(["connect", "--timeout", "60"], { ...(yield* cliEnv), SERVICE_REDIRECT_URI: other })
      expect(result.code, result.stderr).toBe(2)
      expect(Date.now() - started).toBeLessThan(30_000)
      expect(result.stderr.split("\n").filter((l) => l.startsWith("connect:"))).toEqual([
        `connect: the service refused the authorization request (HTTP 400: redirect_uri does not match the OAuth Callback URL configured on the app.); SERVICE_REDIRECT_URI (${other}) must be the app's OAuth Callback URL, character for character; nothing was connected`
      ])
      expect(result.stdout).toBe("")
    })
  )

  it.effect("status --json lists the connections; disconnect --account calls appDisconnect, deletes tokens, marks disconnected", () =>
    Effect.gen(function* () {
      const emulator = yield* TestEmulator
      const [a, b] = emulator.accounts
      const env = yield* cliEnv
      const refreshBefore = Option.getOrThrow(Option.getOrThrow(yield* (yield* TokenStore).read(a!.accountId)).refreshToken)
      const leakable = yield* secrets

      const status = yield* runCli(["status", "--json"], env)
      expect(status.code).toBe(0)
      const rows = (JSON.parse(status.stdout) as { connections: Array<{ accountId: string; status: string; tokenExpiresAt: string | null }> }).connections
      expect(rows.map((r) => [r.accountId, r.status]).sort()).toEqual([[a!.accountId, "active"], [b!.accountId, "active"]].sort())
      expect(rows.every((r) => r.tokenExpiresAt !== null)).toBe(true)

      const disconnect = yield* runCli(["disconnect", "--account", a!.accountId], env)
      expect(disconnect.code).toBe(0)
      expect(disconnect.stdout).toContain(`disconnected ${a!.accountId}`)
      expect(yield* emulator.admin.isRefreshTokenValid({ clientId: emulator.app.clientId, refreshToken: Redacted.value(refreshBefore) })).toBe(false)
      // the table `status` prints without --json
      const view = { now: Date.now(), wide: false, maxWidth: 120 }
      const table = connectionsTable(yield* (yield* Connections).list(), new Map(), view)
      expect(table.split("\n")[0]).toMatch(/^ACCOUNT\s+STATUS\s+REASON\s+TOKEN EXPIRES\s+LAST RUN$/)
      expect(table).toMatch(new RegExp(`${a!.name}\\s+disconnected\\s+disconnect command`))
      expect(table).toMatch(new RegExp(`${b!.name}\\s+active\\s+in \\d+ (min|h)`))
      expect(table).not.toContain(a!.accountId)
      // ids with --wide
      expect(connectionsTable(yield* (yield* Connections).list(), new Map(), { ...view, wide: true })).toMatch(new RegExp(`${a!.accountId}\\s+${a!.name}\\s+disconnected`))
      expect(Option.isNone(yield* (yield* TokenStore).read(a!.accountId))).toBe(true)

      yield* assertNoSecretsIn([status.stdout, status.stderr, disconnect.stdout, disconnect.stderr], leakable)
    })
  )

  it.effect("connect: an error redirect without this flow's state does not end it; the right one does, its text escaped on the terminal", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const emulator = yield* TestEmulator
        const acc = emulator.accounts[3]!
        const settings = yield* OAuthClient
        // terminal escapes: set the window title, clear the screen, then a fake prompt on a new line
        const evil = "\u001b]0;owned\u0007\u001b[2Jfake\r\nroot# \u202e"
        const errorRedirect = (state?: string) => {
          const u = new URL(settings.redirectUri)
          u.searchParams.set("error", "access_denied")
          u.searchParams.set("error_description", evil)
          if (state !== undefined) u.searchParams.set("state", state)
          return u.toString()
        }

        const child = yield* spawnCli(["connect", "--timeout", "60"], { ...(yield* cliEnv), LOG_FORMAT: "pretty" })
        const url = yield* child.firstLine
        const forgedNoState = yield* fetchPage(errorRedirect())
        expect(forgedNoState.status).toBe(400)
        expect(forgedNoState.body).toContain("state mismatch")
        const forgedWrongState = yield* fetchPage(errorRedirect("not-this-flows-state"))
        expect(forgedWrongState.status).toBe(400)
        // the flow goes on: the admin approves and the account is connected
        const consent = yield* approveInBrowser(withHint(url, acc.accountId), { accountId: acc.accountId })
        expect((yield* fetchPage(consent.location!)).status).toBe(200)
        const result = yield* child.exit
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toContain(`connected ${acc.name} (${acc.accountId})`)

        // an error redirect with the flow's state ends it; the service's text is shown escaped, never acted on
        const second = yield* spawnCli(["connect", "--timeout", "60"], { ...(yield* cliEnv), LOG_FORMAT: "pretty" })
        const state = new URL(yield* second.firstLine).searchParams.get("state")!
        const denied = yield* fetchPage(errorRedirect(state))
        expect(denied.status).toBe(403)
        const ended = yield* second.exit
        expect(ended.code).toBe(1)
        expect(ended.stderr).toContain("authorization was not granted: access_denied (\\u001b]0;owned\\u0007\\u001b[2Jfake\\u000d\\u000aroot# \\u202e)")
        for (const raw of ["\u001b]0;", "\u0007", "\u001b[2J", "fake\r\n", "\u202e"]) expect(ended.stderr).not.toContain(raw)
      })
    )
  )

  it.effect("connect --login-hint puts the account in the URL; --open hands the URL to the platform's opener, and without one says so and waits", () =>
    Effect.gen(function* () {
      const acc = (yield* TestEmulator).accounts[2]!
      // an opener of our own first on the PATH (the browser's stand-in): it writes down what it was asked to open
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opener-"))
      const opened = path.join(dir, "opened")
      fs.writeFileSync(path.join(dir, "xdg-open"), `#!/bin/sh\nprintf '%s' "$1" > ${JSON.stringify(opened)}\n`, { mode: 0o755 })
      const run = (pathVariable: string) =>
        Effect.scoped(
          Effect.gen(function* () {
            const child = yield* spawnCli(["connect", "--timeout", "60", "--login-hint", acc.accountId, "--open"], { ...(yield* cliEnv), PATH: pathVariable })
            const url = yield* child.firstLine
            // the URL as printed, not hinted again here: the hint is the command's
            const consent = yield* approveInBrowser(url, { accountId: acc.accountId })
            yield* fetchPage(consent.location!)
            return { url, result: yield* child.exit }
          })
        )
      const withOpener = yield* run(`${dir}:${process.env.PATH ?? ""}`)
      expect(new URL(withOpener.url).searchParams.get("login_hint")).toBe(acc.accountId)
      expect(withOpener.result.code, withOpener.result.stderr).toBe(0)
      yield* Effect.promise(() => waitFor(() => fs.existsSync(opened)))
      expect(fs.readFileSync(opened, "utf8")).toBe(withOpener.url)
      expect(withOpener.result.stderr).toContain("opened the URL above in the browser; waiting for the redirect on")
      // on a terminal the log's "connected" line is left out; piped (here), stdout says it and the log keeps it
      expect(withOpener.result.stdout).toContain(`connected ${acc.name} (${acc.accountId})`)

      // no opener on this machine (a server): the URL is printed, the reason said, the flow goes on
      const bare = fs.mkdtempSync(path.join(os.tmpdir(), "no-opener-"))
      const without = yield* run(bare)
      expect(without.result.code, without.result.stderr).toBe(0)
      expect(without.result.stderr).toContain("no xdg-open on this machine to open a browser: open the URL above in a browser")
      expect(without.result.stdout).toContain(`connected ${acc.name} (${acc.accountId})`)
    })
  )
})
