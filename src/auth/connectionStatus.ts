import { Schema } from "effect"

/** A connection's status (connections.status): what Connections writes and TokenStore reads with the tokens. */
export const ConnectionStatus = Schema.Literal("active", "revoked", "disconnected")
export type ConnectionStatus = typeof ConnectionStatus.Type

/** The connection's status, or "never connected" when there is no row. */
export type StatusOrAbsent = ConnectionStatus | "never connected"
