/**
 * How long a transaction of ours may sit idle (Postgres's `idle_in_transaction_session_timeout`, set for the
 * transaction alone). Our transactions never wait on anything but their own statements, so only a paused process
 * (SIGSTOP, a frozen VM, a stalled network) reaches it: Postgres then ends its session, and the row locks it held (a
 * lease check, a claim, a job being completed) stop holding back the live workers.
 */
export const pausedTransactionLimit = "20s"
