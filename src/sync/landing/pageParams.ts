import type { ReceivedNode } from "../model.js"
import type { AnyStream } from "../streams/Stream.js"
import { sanitizeJson, sanitizeJsonForColumns } from "./sanitize.js"

/** How a batch of nodes travels to Postgres: one JSON text of containers, the path of the nodes in each, and raws. */
export interface PageJson {
  /** A JSON array of containers; each holds its nodes at `nodesPath`. */
  readonly containers: string
  readonly nodesPath: ReadonlyArray<string>
  /** When some string had to be changed to be stored: the raw nodes as stored, element i for node i; else null. */
  readonly raws: string | null
}

// JSON escapes exactly the characters Postgres refuses (NUL, lone surrogates) as `\u0000` / `\udXXX`, so JSON without
// such an escape is stored as sent; a page that has one (or only seems to) is sanitized node by node
const mayBeUnstorable = /\\u0000|\\ud[89a-f]/i

/**
 * The response bodies as received when every node is landed as received, once each, and no body has an escape
 * Postgres refuses (no serialization on our side at all); else the nodes as one JSON array; and only when some string
 * cannot be stored as sent, the columns' values made storable plus the raw nodes spelled for `raw`.
 */
export const pageJson = (stream: AnyStream, nodes: ReadonlyArray<ReceivedNode>, bodies: ReadonlyArray<string> | undefined): PageJson => {
  const sent = nodes.every((n) => n.node === n.raw)
  if (sent && bodies !== undefined && !bodies.some((body) => mayBeUnstorable.test(body))) {
    return { containers: `[${bodies.join(",")}]`, nodesPath: ["data", ...stream.connectionPath, "nodes"], raws: null }
  }
  if (sent) {
    const json = JSON.stringify(nodes.map((n) => n.raw))
    if (!mayBeUnstorable.test(json)) return { containers: `[${json}]`, nodesPath: [], raws: null }
  }
  // the columns (the node's, its children's, its custom fields') from a copy made storable; `raw` from one spelled for it
  const columns = nodes.map((n) => sanitizeJsonForColumns(n.node))
  return { containers: `[${JSON.stringify(columns)}]`, nodesPath: [], raws: JSON.stringify(nodes.map((n) => sanitizeJson(n.raw))) }
}
