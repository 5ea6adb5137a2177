import { Data } from "effect"

/** A node the service sent does not match the stream's Schema: the account's run fails, nothing of the page lands. */
export class NodeSchemaMismatch extends Data.TaggedError("NodeSchemaMismatch")<{
  readonly accountId: string
  readonly stream: string
  /** Path inside the node, e.g. "jobNumber". */
  readonly field: string
  /** The position of the page that carried the node in the pass's order. */
  readonly position: number
  readonly nodeId: string | undefined
  readonly detail: string
}> {
  override get message() {
    return `account ${this.accountId}, stream ${this.stream}: node${this.nodeId ? ` ${this.nodeId}` : ""} field \`${this.field}\`: ${this.detail} (page at position ${this.position}); nothing of that page was stored`
  }
}

/** The connection in `data` is missing or malformed (not a node problem). */
export class ConnectionShapeInvalid extends Data.TaggedError("ConnectionShapeInvalid")<{
  readonly accountId: string
  readonly stream: string
  /** The position of the page, when it was one. */
  readonly position: number | null
  readonly detail: string
}> {
  override get message() {
    return `account ${this.accountId}, stream ${this.stream}: unexpected connection shape${this.position === null ? "" : ` (page at position ${this.position})`}: ${this.detail}`
  }
}
