import { afterAll, expect } from "vitest"

/**
 * Every test file: whatever the code under test prints through the console (Effect's loggers do) is scanned at the
 * end for secrets: anything shaped like a JWT (our access tokens), and every secret a test registered
 * (client secrets of test apps, token keys). Child processes' output is checked by the tests that spawn them.
 */
const registry: Set<string> = ((globalThis as any).__accountSyncSecrets ??= new Set<string>())

/** Makes `secret` one the suite must never print. */
export const registerSecret = (secret: string) => {
  if (secret.length >= 8) registry.add(secret)
}

const jwt = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/

/**
 * What this test file printed. The console is wrapped once per process: where files share a process (the unit
 * project runs without isolation), this file runs again before each test file and only starts a new list.
 */
const scan: { printed: Array<string> } = ((globalThis as any).__accountSyncPrinted ??= { printed: [] })
scan.printed = []
const printed = scan.printed

if ((globalThis as any).__accountSyncConsoleWrapped !== true) {
  ;(globalThis as any).__accountSyncConsoleWrapped = true
  for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
    const original = console[method].bind(console)
    console[method] = (...args: Array<unknown>) => {
      scan.printed.push(args.map((a) => (typeof a === "string" ? a : safeJson(a))).join(" "))
      original(...args)
    }
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

afterAll(() => {
  const leaks: Array<string> = []
  for (const line of printed) {
    if (jwt.test(line)) leaks.push(`a JWT in: ${line.slice(0, 200)}`)
    for (const secret of registry) if (line.includes(secret)) leaks.push(`a registered secret in: ${line.slice(0, 120)}...`)
  }
  expect(leaks, "printed output must never contain a token or a secret").toEqual([])
})
