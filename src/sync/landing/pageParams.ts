import type { ReceivedNode } from "../model.js"
import type { AnyStream } from "../streams/Stream.js"
import { sanitizeJson, sanitizeJsonForColumns } from "./sanitize.js"

/** The rows of one page as the landing takes them: its nodes, and the body they were read from when it was kept. */
export interface PageRows {
  readonly nodes: ReadonlyArray<ReceivedNode>
  /**
   * The response body the nodes were read from (at `data`, the stream's connection path, `nodes`), when they are as
   * received. When the page lands from it (landsFromBody), its nodes may hold only their id and updatedAt.
   */
  readonly body: Uint8Array | undefined
}

/** How a batch of pages travels to Postgres: one JSON array of containers, the path of the nodes in each, and raws. */
export interface PageJson {
  /**
   * A JSON array of containers, one a page; each holds its nodes at `nodesPath`. In jsonb's binary input format (a
   * version byte, then the text's bytes): a Buffer parameter goes to Postgres in binary format, a page's body copied
   * as received, never decoded to a string and encoded back.
   */
  readonly containers: Buffer
  readonly nodesPath: ReadonlyArray<string>
  /**
   * When some string had to be changed to be stored: for each container, the raw nodes as stored (element i for node
   * i; none for a container stored as sent); else null.
   */
  readonly raws: string | null
  /**
   * How ids read more than once land (pages of one batch overlap where they join), the last read of each:
   * `none`, no id repeats; `across`, only across pages: `earlierReads` names the reads to leave out, as
   * `<container>:<id>` (containers from 1); `within`, a page repeats an id itself: the statement sorts to find the last.
   */
  readonly repeats: "none" | "across" | "within"
  readonly earlierReads: ReadonlyArray<string>
}

/** Which ids repeat in a batch and where: the reads a later page of the batch replaces. */
const repeatedReads = (pages: ReadonlyArray<PageRows>): Pick<PageJson, "repeats" | "earlierReads"> => {
  const lastPage = new Map<string, number>()
  let within = false
  pages.forEach((page, p) => {
    for (const { node } of page.nodes) {
      if (lastPage.get(node.id) === p) within = true
      lastPage.set(node.id, p)
    }
  })
  if (within) return { repeats: "within", earlierReads: [] }
  const earlierReads: Array<string> = []
  pages.forEach((page, p) => {
    for (const { node } of page.nodes) if (lastPage.get(node.id) !== p) earlierReads.push(`${p + 1}:${node.id}`)
  })
  return { repeats: earlierReads.length > 0 ? "across" : "none", earlierReads }
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

/**
 * Whether a page lands from its body as received: it kept it, every node is as received (none was decoded into
 * something else) and the body has no escape Postgres refuses. The pager keeps only the ids and updatedAt of such a
 * page's nodes; everything else lands from the body.
 */
export const landsFromBody = (page: PageRows): page is PageRows & { readonly body: Uint8Array } =>
  page.body !== undefined && page.nodes.every((n) => n.node === n.raw) && !bytesMayBeUnstorable(page.body)

/** `json` (the nodes) at `path` in a container, as a page's body holds them. */
const container = (path: ReadonlyArray<string>, json: string): string => path.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, json)

/**
 * Each page as a container: its body as received when it lands from it (no serialization on our side); else its
 * nodes as JSON; and only when some string cannot be stored as sent, its columns' values made storable plus its raw
 * nodes spelled for `raw`.
 */
export const pageJson = (stream: AnyStream, pages: ReadonlyArray<PageRows>): PageJson => {
  const nodesPath = ["data", ...stream.connectionPath, "nodes"]
  const parts: Array<Uint8Array> = []
  const raws: Array<string | null> = []
  for (const page of pages) {
    if (landsFromBody(page)) {
      parts.push(page.body)
      raws.push(null)
      continue
    }
    const json = page.nodes.every((n) => n.node === n.raw) ? JSON.stringify(page.nodes.map((n) => n.raw)) : undefined
    if (json !== undefined && !mayBeUnstorable.test(json)) {
      parts.push(Buffer.from(container(nodesPath, json)))
      raws.push(null)
      continue
    }
    // the columns (the node's, its children's, its custom fields') from a copy made storable; `raw` from one spelled for it
    parts.push(Buffer.from(container(nodesPath, JSON.stringify(page.nodes.map((n) => sanitizeJsonForColumns(n.node))))))
    raws.push(JSON.stringify(page.nodes.map((n) => sanitizeJson(n.raw))))
  }
  const containers = Buffer.concat([jsonbVersion, Buffer.from("["), ...parts.flatMap((part, i) => (i === 0 ? [part] : [comma, part])), Buffer.from("]")])
  return {
    containers,
    nodesPath,
    // an empty array where a container needs none (`null -> 0` would be the JSON null, not SQL's)
    raws: raws.every((r) => r === null) ? null : `[${raws.map((r) => r ?? "[]").join(",")}]`,
    ...repeatedReads(pages)
  }
}
