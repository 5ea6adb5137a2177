import { describe, expect, it } from "@effect/vitest"
import { accountNumber, matchAccount } from "../../../src/auth/accountIds.js"

const b64 = (s: string) => Buffer.from(s).toString("base64")
const graphqlId = b64("gid://service/Account/1001")

describe("account ids in their encodings", () => {
  it.each([
    ["the GraphQL id", graphqlId, "1001"],
    ["the webhook's base64 of the number", "MTAwMQ==", "1001"],
    ["base64 without padding", "MTAwMQ", "1001"],
    ["the number", "1001", "1001"],
    ["another service's global id", b64("gid://jobber/Account/42"), "42"],
    ["a global id of something else", b64("gid://service/Job/1001"), undefined],
    ["an opaque id", "acc-w1", undefined],
    ["text that is not base64", "not base64!", undefined]
  ])("%s", (_, id, number) => {
    expect(accountNumber(id)).toBe(number)
  })

  it("a delivery matches the connection with the same id, or with the same number however encoded", () => {
    const connected = [graphqlId, b64("gid://service/Account/1002"), "acc-w1"]
    expect(matchAccount(graphqlId, connected)).toBe(graphqlId)
    expect(matchAccount("MTAwMQ==", connected)).toBe(graphqlId)
    expect(matchAccount(b64("1002"), connected)).toBe(connected[1])
    expect(matchAccount("1002", connected)).toBe(connected[1])
    expect(matchAccount("acc-w1", connected)).toBe("acc-w1")
    expect(matchAccount(b64("1003"), connected)).toBeUndefined()
    expect(matchAccount("acc-w2", connected)).toBeUndefined()
  })
})
