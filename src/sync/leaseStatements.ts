import { Schema } from "effect"

/** The statements of the lease session (AccountLeasesLive), $-numbered, and the rows they return. */

export const Taken = Schema.Struct({ epoch: Schema.Union(Schema.Number, Schema.NumberFromString) })
export const TakenForRunRow = Schema.Struct({
  epoch: Schema.Union(Schema.Number, Schema.NumberFromString),
  released: Schema.Boolean,
  abandoned: Schema.Union(Schema.Number, Schema.NumberFromString)
})
export const Holder = Schema.Struct({ holder: Schema.String, ours: Schema.Boolean })
export const Renewed = Schema.Struct({ account_id: Schema.String })

/** The account's lease row locked (FOR UPDATE: it shows the lease as it is once locked) and this session. */
const lockedLeaseAndSession = `
  current AS (SELECT epoch, expires_at FROM account_leases WHERE account_id = $1 FOR UPDATE),
  me AS (SELECT pg_backend_pid() AS pid, (SELECT backend_start FROM pg_stat_get_activity(pg_backend_pid())) AS started)`

/**
 * The lease taken when free: none yet, lapsed, or its session gone (on the embedded database, which one process opens
 * at a time: held by an earlier start of the program). FOR UPDATE waits (lock_timeout) for writes under the old epoch.
 * $1 account, $2 this process, $3 embedded, $4 seconds.
 */
const takeLease = `
  INSERT INTO account_leases AS l (account_id, epoch, holder, holder_pid, holder_started, instance, acquired_at, expires_at)
  SELECT $1, 1, current_setting('application_name') || ' (pid ' || me.pid || ')', CASE WHEN $3 THEN NULL ELSE me.pid END,
    CASE WHEN $3 THEN NULL ELSE me.started END, $2, now(), now() + make_interval(secs => $4)
  FROM me WHERE (SELECT count(*) FROM current) >= 0
  ON CONFLICT (account_id) DO UPDATE SET epoch = l.epoch + 1, holder = EXCLUDED.holder, holder_pid = EXCLUDED.holder_pid,
    holder_started = EXCLUDED.holder_started, instance = EXCLUDED.instance, acquired_at = now(), expires_at = EXCLUDED.expires_at
  WHERE l.expires_at <= now()
    OR CASE WHEN $3 THEN l.instance <> $2
      ELSE NOT EXISTS (SELECT 1 FROM pg_stat_get_activity(l.holder_pid) a WHERE a.backend_start = l.holder_started) END
  RETURNING l.epoch`

export const acquireStatement = `WITH ${lockedLeaseAndSession} ${takeLease}`

/**
 * The lease taken, and the account's runs left `running` under an earlier epoch closed in the same statement when the
 * previous lease was released ('-infinity': its holder's writes all committed before, so this statement's snapshot
 * holds them) or there was none.
 */
export const acquireForRunStatement = `
  WITH ${lockedLeaseAndSession},
    taken AS (${takeLease}),
    released AS (SELECT NOT EXISTS (SELECT 1 FROM current WHERE expires_at <> '-infinity') AS released),
    closed AS (
      UPDATE sync_runs r SET outcome = 'interrupted', finished_at = now(), error = 'the process running it stopped or lost the account'
      FROM taken, released
      WHERE released.released AND r.account_id = $1 AND r.outcome = 'running' AND (r.lease_epoch IS NULL OR r.lease_epoch < taken.epoch)
      RETURNING r.id)
  SELECT taken.epoch, released.released, (SELECT count(*) FROM closed) AS abandoned FROM taken, released`

export const holderStatement = `SELECT holder, instance = $2 AS ours FROM account_leases WHERE account_id = $1`

/** Every lease of this process still at its epoch lasts $3 seconds more, held by this session. $1 accounts, $2 epochs. */
export const renewStatement = `
  UPDATE account_leases l SET expires_at = now() + make_interval(secs => $3),
    holder_pid = CASE WHEN $4 THEN NULL ELSE pg_backend_pid() END,
    holder_started = CASE WHEN $4 THEN NULL ELSE (SELECT backend_start FROM pg_stat_get_activity(pg_backend_pid())) END
  FROM unnest($1::text[], $2::bigint[]) AS h(account_id, epoch)
  WHERE l.account_id = h.account_id AND l.epoch = h.epoch
  RETURNING l.account_id`

export const releaseStatement = `UPDATE account_leases SET expires_at = '-infinity' WHERE account_id = $1 AND epoch = $2`
