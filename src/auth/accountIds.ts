/**
 * Account ids as the service spells them in different places: GraphQL's `account { id }` is the base64 of a global
 * id ending in the account's number (`gid://service/Account/1001`), while a webhook delivery may carry the base64 of
 * the number alone (`MTAwMQ==`), or the number itself. Both name the same account: they share the number.
 */

const decodeBase64 = (value: string): string | undefined => {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return undefined
  const text = Buffer.from(value, "base64").toString("utf8")
  // a round trip proves it was base64 of printable text, not an id that happens to use the alphabet
  return /^[\x20-\x7e]+$/.test(text) && Buffer.from(text, "utf8").toString("base64").replace(/=+$/, "") === value.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/")
    ? text
    : undefined
}

/** The account number an id names (`gid://.../Account/1001`, base64 of either, or `1001`), if it names one. */
export const accountNumber = (id: string): string | undefined => {
  const plain = id.trim()
  if (/^\d+$/.test(plain)) return plain
  const decoded = decodeBase64(plain)
  if (decoded === undefined) return undefined
  if (/^\d+$/.test(decoded)) return decoded
  return /^gid:\/\/[^/]+\/Account\/(\d+)$/.exec(decoded)?.[1]
}

/** The connected account a delivery's account id names: the same id, or the same account number however encoded. */
export const matchAccount = (sent: string, connected: ReadonlyArray<string>): string | undefined => {
  if (connected.includes(sent)) return sent
  const number = accountNumber(sent)
  return number === undefined ? undefined : connected.find((id) => accountNumber(id) === number)
}
