import type { ReceivedNode } from "../model.js"
import type { AnyStream } from "../streams/Stream.js"
import { sanitizeJson, sanitizeJsonForColumns } from "./sanitize.js"

/** How a batch of nodes travels to Postgres: one JSON array of containers, the path of the nodes in each, and raws. */
export interface PageJson {
  /**
   * A JSON array of containers; each holds its nodes at `nodesPath`. As text, or as jsonb's binary input (a version
   * byte, then the text's bytes): a Buffer parameter goes to Postgres in binary format, the received bytes copied as
   * they are, never decoded to a string and encoded back.
   */
  readonly containers: string | Buffer
  readonly nodesPath: ReadonlyArray<string>
  /** When some string had to be changed to be stored: the raw nodes as stored, element i for node i; else null. */
  readonly raws: string | null
}

// JSON escapes exactly the characters Postgres refuses (NUL, lone surrogates) as `\u0000` / `\udXXX`, so JSON without
// such an escape is stored as sent; a page that has one (or only seems to) is sanitized node by node
const mayBeUnstorable = /\\u0000|\\ud[89a-f]/i

const backslashU = Buffer.from("\\u")
const isSurrogateDigit = (byte: number | undefined) =>
  byte !== undefined && ((byte >= 0x38 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46))

/** `mayBeUnstorable` on the bytes of a body: `\u0000`, or `\ud` / `\uD` followed by 8, 9 or a-f (any case). */
export const bytesMayBeUnstorable = (bytes: Uint8Array): boolean => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let i = buffer.indexOf(backslashU); i !== -1; i = buffer.indexOf(backslashU, i + 2)) {
    const a = buffer[i + 2]
    if (a === 0x30 && buffer[i + 3] === 0x30 && buffer[i + 4] === 0x30 && buffer[i + 5] === 0x30) return true
    if ((a === 0x64 || a === 0x44) && isSurrogateDigit(buffer[i + 3])) return true
  }
  return false
}

/** jsonb's binary input format: version 1, then the JSON text. */
const jsonbVersion = Buffer.from([1])
const comma = Buffer.from(",")

/** The bodies as one JSON array in jsonb's binary input format, their bytes copied once. */
const containersOf = (bodies: ReadonlyArray<Uint8Array>): Buffer =>
  Buffer.concat([jsonbVersion, Buffer.from("["), ...bodies.flatMap((body, i) => (i === 0 ? [body] : [comma, body])), Buffer.from("]")])

/**
 * The response bodies as received when every node is landed as received, once each, and no body has an escape
 * Postgres refuses (no serialization on our side at all); else the nodes as one JSON array; and only when some string
 * cannot be stored as sent, the columns' values made storable plus the raw nodes spelled for `raw`.
 */
export const pageJson = (stream: AnyStream, nodes: ReadonlyArray<ReceivedNode>, bodies: ReadonlyArray<Uint8Array> | undefined): PageJson => {
  const sent = nodes.every((n) => n.node === n.raw)
  if (sent && bodies !== undefined && !bodies.some(bytesMayBeUnstorable)) {
    return { containers: containersOf(bodies), nodesPath: ["data", ...stream.connectionPath, "nodes"], raws: null }
  }
  if (sent) {
    const json = JSON.stringify(nodes.map((n) => n.raw))
    if (!mayBeUnstorable.test(json)) return { containers: `[${json}]`, nodesPath: [], raws: null }
  }
  // the columns (the node's, its children's, its custom fields') from a copy made storable; `raw` from one spelled for it
  const columns = nodes.map((n) => sanitizeJsonForColumns(n.node))
  return { containers: `[${JSON.stringify(columns)}]`, nodesPath: [], raws: JSON.stringify(nodes.map((n) => sanitizeJson(n.raw))) }
}
