import { describe, expect, it } from "@effect/vitest"
import { checkStreams } from "../../../src/cli/accountSelection.js"
import { closest, mistyped } from "../../../src/cli/didYouMean.js"
import { optionNamesOf } from "../../../src/cli/help.js"
import { commands } from "../../../src/cli/root.js"
import { streamNames } from "../../../src/sync/streams/index.js"

const all = Object.entries(commands)

describe("did you mean", () => {
  it("a mistyped option, command or stream names what was probably meant (exit 2); a far-off word gets no guess", () => {
    expect(mistyped(["sync", "--acount", "x"], all)).toMatchObject({ code: 2, message: "sync --acount: no such option; did you mean --account? (account-sync sync --help lists them)" })
    expect(mistyped(["status", "--stale=1", "--failng"], all)?.message).toContain("did you mean --failing?")
    expect(mistyped(["statuss"], all)?.message).toBe("statuss: no such command; did you mean status? (account-sync --help lists them)")
    expect(mistyped(["webhooks", "subscribe", "--ur", "x"], all)?.message).toContain("webhooks subscribe --ur: no such option; did you mean --url?")
    expect(mistyped(["sync", "--frobnicate"], all)?.message).toBe("sync --frobnicate: no such option (account-sync sync --help lists them)")
    expect(checkStreams("--stream", ["Jobs"], streamNames)?.message).toMatch(/^--stream Jobs: no such stream; did you mean jobs\? the streams are users, /)
    expect(checkStreams("--stream", ["invocies"], streamNames)?.message).toContain("did you mean invoices?")
    expect(closest("zzz", streamNames)).toBeUndefined()
  })

  it("every option of every command, a value after --, and an SQL argument that starts with -- pass untouched", () => {
    for (const [name, command] of all) {
      for (const flag of optionNamesOf(command)) expect(mistyped([name, flag], all), `${name} ${flag}`).toBeUndefined()
    }
    expect(mistyped(["query", "--x\rCOMMIT /*\nSELECT */"], all)).toBeUndefined()
    expect(mistyped(["query", "--", "--not-an-option"], all)).toBeUndefined()
    expect(mistyped(["--log-level", "warn"], all)).toBeUndefined()
  })

  it("a whole-number option given something else names the option and what it wants (the parser said \"'abc' is not a integer\")", () => {
    expect(mistyped(["connect", "--timeout", "abc"], all)).toMatchObject({
      code: 2,
      message: "connect --timeout abc: expected a whole number (--timeout SECONDS; account-sync connect --help says more)"
    })
    expect(mistyped(["sync", "--concurrency=two"], all)?.message).toBe("sync --concurrency two: expected a whole number (--concurrency N; account-sync sync --help says more)")
    expect(mistyped(["emulator", "--port", "4010.5"], all)?.message).toMatch(/^emulator --port 4010\.5: expected a whole number/)
    expect(mistyped(["connect", "--timeout", "120"], all)).toBeUndefined()
    expect(mistyped(["emulator", "--port=0", "--jobs", "200"], all)).toBeUndefined()
  })
})
