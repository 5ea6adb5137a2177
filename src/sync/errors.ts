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

/**
 * The account's lease is no longer this run's (its epoch moved: another holder took it after this one lapsed, or
 * after the session that held it ended): this run stops writing the account; what it was writing was not stored.
 */
export class AccountLockLost extends Data.TaggedError("AccountLockLost")<{ readonly accountId: string; readonly stream: string }> {
  override get message() {
    return `account ${this.accountId}, stream ${this.stream}: the account's lease moved to another holder; stopped writing (nothing of the page was stored), the run is interrupted and the next one resumes from the checkpoint`
  }
}

/**
 * The pass cannot page on: a page that never joined the rows landed within the bound of re-asks, a service that
 * ignores every way of asking for a page, pages that keep coming with nothing new. Says what the service did.
 */
export class PagingStuck extends Data.TaggedError("PagingStuck")<{
  readonly accountId: string
  readonly stream: string
  /** Where the page was asked, e.g. "offset 100". */
  readonly at: string
  readonly detail: string
}> {
  override get message() {
    return `account ${this.accountId}, stream ${this.stream}: paging stopped at ${this.at}: ${this.detail}`
  }
}
