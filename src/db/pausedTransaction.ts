import type { SqlClient } from "@effect/sql"

/**
 * An expression that limits how long the current transaction may sit idle (Postgres's
 * `idle_in_transaction_session_timeout`, set for the transaction alone): put in the transaction's first statement. The
 * transactions that carry it wait on nothing but their own statements, so only a paused process (SIGSTOP, a frozen VM,
 * a stalled network) reaches it: Postgres then ends its session, and the row locks it held (a lease check, a claim, a
 * job being completed) stop holding back the live workers.
 */
export const limitPausedTransaction = (sql: SqlClient.SqlClient) => sql`set_config('idle_in_transaction_session_timeout', '20s', true)`
