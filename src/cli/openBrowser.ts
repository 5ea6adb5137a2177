import { spawn } from "node:child_process"
import { Effect } from "effect"

/** The platform's command that opens a URL in the default browser. */
export const openerFor = (platform: NodeJS.Platform): { readonly command: string; readonly args: (url: string) => ReadonlyArray<string> } =>
  platform === "darwin"
    ? { command: "open", args: (url) => [url] }
    : platform === "win32"
      ? { command: "cmd", args: (url) => ["/c", "start", '""', url.replaceAll("&", "^&")] }
      : { command: "xdg-open", args: (url) => [url] }

/** How long the opener may take to start before it is left to itself (it runs on, detached). */
const startTimeoutMs = 2_000

/**
 * Opens `url` with the platform's opener (open, xdg-open, start), detached: what happened, in words, when it could
 * not (no opener on this machine: a server or a container); the URL is printed either way, so nothing depends on it.
 */
export const openInBrowser = (url: string, platform: NodeJS.Platform = process.platform): Effect.Effect<string | undefined> =>
  Effect.async<string | undefined>((resume) => {
    const opener = openerFor(platform)
    let settled = false
    const done = (result: string | undefined) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(Effect.succeed(result))
    }
    const child = spawn(opener.command, [...opener.args(url)], { detached: true, stdio: "ignore", windowsVerbatimArguments: platform === "win32" })
    child.once("error", (e: NodeJS.ErrnoException) =>
      done(e.code === "ENOENT" ? `no ${opener.command} on this machine to open a browser` : `${opener.command} failed: ${e.message}`)
    )
    child.once("spawn", () => done(undefined))
    const timer = setTimeout(() => done(undefined), startTimeoutMs)
    child.unref()
  })
