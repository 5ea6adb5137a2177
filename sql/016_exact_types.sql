-- Data an analyst can trust, in place (every row kept):
-- * every number the service sends lands as numeric, exactly as sent: money (totals, amounts, prices, costs,
--   balances, rates), quantities, markups. The values are read again from `raw` (the node as the service sent it),
--   so a total of 2481.62 is 2481.62, not the nearest double; a row whose raw lacks the field keeps its value.
-- * a coordinate is double precision everywhere: a client's address sends its latitude and longitude as strings;
--   a string that is no number becomes null (raw keeps it).
-- * column comments copied from the service's schema are mended where they are wrong, cut off or name the vendor,
--   and the control tables say what they are.
ALTER TABLE users
  ALTER COLUMN labour_rate TYPE numeric USING COALESCE((raw #>> '{labourRate}')::numeric, labour_rate::numeric);
ALTER TABLE products
  ALTER COLUMN default_unit_cost TYPE numeric USING COALESCE((raw #>> '{defaultUnitCost}')::numeric, default_unit_cost::numeric),
  ALTER COLUMN internal_unit_cost TYPE numeric USING COALESCE((raw #>> '{internalUnitCost}')::numeric, internal_unit_cost::numeric),
  ALTER COLUMN markup TYPE numeric USING COALESCE((raw #>> '{markup}')::numeric, markup::numeric);
ALTER TABLE clients
  ALTER COLUMN balance TYPE numeric USING COALESCE((raw #>> '{balance}')::numeric, balance::numeric),
  ALTER COLUMN billing_address_latitude TYPE double precision USING CASE WHEN billing_address_latitude ~ '^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$' THEN billing_address_latitude::double precision END,
  ALTER COLUMN billing_address_longitude TYPE double precision USING CASE WHEN billing_address_longitude ~ '^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$' THEN billing_address_longitude::double precision END;
ALTER TABLE request_line_items
  ALTER COLUMN quantity TYPE numeric USING COALESCE((raw #>> '{quantity}')::numeric, quantity::numeric),
  ALTER COLUMN unit_price TYPE numeric USING COALESCE((raw #>> '{unitPrice}')::numeric, unit_price::numeric),
  ALTER COLUMN total_price TYPE numeric USING COALESCE((raw #>> '{totalPrice}')::numeric, total_price::numeric),
  ALTER COLUMN total_cost TYPE numeric USING COALESCE((raw #>> '{totalCost}')::numeric, total_cost::numeric),
  ALTER COLUMN unit_cost TYPE numeric USING COALESCE((raw #>> '{unitCost}')::numeric, unit_cost::numeric);
ALTER TABLE quotes
  ALTER COLUMN amounts_subtotal TYPE numeric USING COALESCE((raw #>> '{amounts,subtotal}')::numeric, amounts_subtotal::numeric),
  ALTER COLUMN amounts_discount_amount TYPE numeric USING COALESCE((raw #>> '{amounts,discountAmount}')::numeric, amounts_discount_amount::numeric),
  ALTER COLUMN amounts_tax_amount TYPE numeric USING COALESCE((raw #>> '{amounts,taxAmount}')::numeric, amounts_tax_amount::numeric),
  ALTER COLUMN amounts_non_tax_amount TYPE numeric USING COALESCE((raw #>> '{amounts,nonTaxAmount}')::numeric, amounts_non_tax_amount::numeric),
  ALTER COLUMN amounts_total TYPE numeric USING COALESCE((raw #>> '{amounts,total}')::numeric, amounts_total::numeric),
  ALTER COLUMN amounts_deposit_amount TYPE numeric USING COALESCE((raw #>> '{amounts,depositAmount}')::numeric, amounts_deposit_amount::numeric),
  ALTER COLUMN amounts_outstanding_deposit_amount TYPE numeric USING COALESCE((raw #>> '{amounts,outstandingDepositAmount}')::numeric, amounts_outstanding_deposit_amount::numeric),
  ALTER COLUMN deposit_amount_unallocated TYPE numeric USING COALESCE((raw #>> '{depositAmountUnallocated}')::numeric, deposit_amount_unallocated::numeric);
ALTER TABLE quote_line_items
  ALTER COLUMN quantity TYPE numeric USING COALESCE((raw #>> '{quantity}')::numeric, quantity::numeric),
  ALTER COLUMN unit_price TYPE numeric USING COALESCE((raw #>> '{unitPrice}')::numeric, unit_price::numeric),
  ALTER COLUMN total_price TYPE numeric USING COALESCE((raw #>> '{totalPrice}')::numeric, total_price::numeric),
  ALTER COLUMN total_cost TYPE numeric USING COALESCE((raw #>> '{totalCost}')::numeric, total_cost::numeric),
  ALTER COLUMN markup TYPE numeric USING COALESCE((raw #>> '{markup}')::numeric, markup::numeric);
ALTER TABLE jobs
  ALTER COLUMN total TYPE numeric USING COALESCE((raw #>> '{total}')::numeric, total::numeric),
  ALTER COLUMN invoiced_total TYPE numeric USING COALESCE((raw #>> '{invoicedTotal}')::numeric, invoiced_total::numeric),
  ALTER COLUMN uninvoiced_total TYPE numeric USING COALESCE((raw #>> '{uninvoicedTotal}')::numeric, uninvoiced_total::numeric),
  ALTER COLUMN completed_and_uninvoiced_visits_total TYPE numeric USING COALESCE((raw #>> '{completedAndUninvoicedVisitsTotal}')::numeric, completed_and_uninvoiced_visits_total::numeric);
ALTER TABLE job_line_items
  ALTER COLUMN quantity TYPE numeric USING COALESCE((raw #>> '{quantity}')::numeric, quantity::numeric),
  ALTER COLUMN unit_price TYPE numeric USING COALESCE((raw #>> '{unitPrice}')::numeric, unit_price::numeric),
  ALTER COLUMN total_price TYPE numeric USING COALESCE((raw #>> '{totalPrice}')::numeric, total_price::numeric),
  ALTER COLUMN total_cost TYPE numeric USING COALESCE((raw #>> '{totalCost}')::numeric, total_cost::numeric);
ALTER TABLE visits
  ALTER COLUMN amounts_visit_based_billing_total TYPE numeric USING COALESCE((raw #>> '{amounts,visitBasedBillingTotal}')::numeric, amounts_visit_based_billing_total::numeric);
ALTER TABLE visit_line_items
  ALTER COLUMN quantity TYPE numeric USING COALESCE((raw #>> '{quantity}')::numeric, quantity::numeric),
  ALTER COLUMN unit_price TYPE numeric USING COALESCE((raw #>> '{unitPrice}')::numeric, unit_price::numeric),
  ALTER COLUMN total_price TYPE numeric USING COALESCE((raw #>> '{totalPrice}')::numeric, total_price::numeric),
  ALTER COLUMN total_cost TYPE numeric USING COALESCE((raw #>> '{totalCost}')::numeric, total_cost::numeric);
ALTER TABLE invoices
  ALTER COLUMN amounts_subtotal TYPE numeric USING COALESCE((raw #>> '{amounts,subtotal}')::numeric, amounts_subtotal::numeric),
  ALTER COLUMN amounts_discount_amount TYPE numeric USING COALESCE((raw #>> '{amounts,discountAmount}')::numeric, amounts_discount_amount::numeric),
  ALTER COLUMN amounts_legacy_discount_amount TYPE numeric USING COALESCE((raw #>> '{amounts,legacyDiscountAmount}')::numeric, amounts_legacy_discount_amount::numeric),
  ALTER COLUMN amounts_tax_amount TYPE numeric USING COALESCE((raw #>> '{amounts,taxAmount}')::numeric, amounts_tax_amount::numeric),
  ALTER COLUMN amounts_non_tax_amount TYPE numeric USING COALESCE((raw #>> '{amounts,nonTaxAmount}')::numeric, amounts_non_tax_amount::numeric),
  ALTER COLUMN amounts_tips_total TYPE numeric USING COALESCE((raw #>> '{amounts,tipsTotal}')::numeric, amounts_tips_total::numeric),
  ALTER COLUMN amounts_total TYPE numeric USING COALESCE((raw #>> '{amounts,total}')::numeric, amounts_total::numeric),
  ALTER COLUMN amounts_deposit_amount TYPE numeric USING COALESCE((raw #>> '{amounts,depositAmount}')::numeric, amounts_deposit_amount::numeric),
  ALTER COLUMN amounts_payments_total TYPE numeric USING COALESCE((raw #>> '{amounts,paymentsTotal}')::numeric, amounts_payments_total::numeric),
  ALTER COLUMN amounts_invoice_balance TYPE numeric USING COALESCE((raw #>> '{amounts,invoiceBalance}')::numeric, amounts_invoice_balance::numeric);
ALTER TABLE invoice_line_items
  ALTER COLUMN quantity TYPE numeric USING COALESCE((raw #>> '{quantity}')::numeric, quantity::numeric),
  ALTER COLUMN unit_price TYPE numeric USING COALESCE((raw #>> '{unitPrice}')::numeric, unit_price::numeric),
  ALTER COLUMN total_price TYPE numeric USING COALESCE((raw #>> '{totalPrice}')::numeric, total_price::numeric),
  ALTER COLUMN original_cost TYPE numeric USING COALESCE((raw #>> '{originalCost}')::numeric, original_cost::numeric);

-- Column comments where the service's own description is wrong, cut off or names the vendor (src/sync/streams/descriptions.ts).
COMMENT ON COLUMN users.phone_country_code IS 'The country code of the phone number';
COMMENT ON COLUMN users.is_restricted IS 'Whether the user is an administrator whose account is restricted';
COMMENT ON COLUMN users.has_jobber_payments_setup IS 'Whether the user''s account has the service''s payments set up';
COMMENT ON COLUMN products.description IS 'The description of the product or service';
COMMENT ON COLUMN products.category IS 'The category of the product or service';
COMMENT ON COLUMN products.default_unit_cost IS 'The default unit price of the product or service';
COMMENT ON COLUMN products.internal_unit_cost IS 'The default internal unit cost of the product or service';
COMMENT ON COLUMN products.markup IS 'The default markup of the product or service, in percent';
COMMENT ON COLUMN products.taxable IS 'Whether the product or service is taxable';
COMMENT ON COLUMN products.quantity_range_min_quantity IS 'The smallest quantity (inclusive) a client can choose when booking the product or service online';
COMMENT ON COLUMN products.quantity_range_max_quantity IS 'The largest quantity (inclusive) a client can choose when booking the product or service online';
COMMENT ON COLUMN clients.billing_address_street IS 'The street address: its first and second lines together';
COMMENT ON COLUMN clients.payment_term_id IS 'The id of the client''s payment term';
COMMENT ON COLUMN clients.jobber_web_uri IS 'The URI of the record in the service''s web app';
COMMENT ON COLUMN properties.jobber_web_uri IS 'The URI of the record in the service''s web app';
COMMENT ON COLUMN requests.jobber_web_uri IS 'The URI of the record in the service''s web app';
COMMENT ON COLUMN quotes.title IS 'The title of the quote';
COMMENT ON COLUMN quotes.quote_status IS 'The current status of the quote';
COMMENT ON COLUMN quotes.jobber_web_uri IS 'The URI of the record in the service''s web app';
COMMENT ON COLUMN jobs.title IS 'The title of the job';
COMMENT ON COLUMN jobs.jobber_web_uri IS 'The URI of the record in the service''s web app';
COMMENT ON COLUMN invoices.amounts_payments_total IS 'The total of the payments made on the invoice';
COMMENT ON COLUMN invoices.jobber_web_uri IS 'The URI of the record in the service''s web app';

-- The control tables: what account-sync keeps about accounts, passes, runs and change events.
COMMENT ON TABLE connections IS 'One row per connected account: its name and status (active, revoked, disconnected). Every data table''s account_id is one of these.';
COMMENT ON COLUMN connections.account_id IS 'The account''s id at the service (its account { id }).';
COMMENT ON COLUMN connections.account_name IS 'The account''s name, as the service last gave it.';
COMMENT ON COLUMN connections.status IS 'active (synced), revoked (the service refused its tokens: reconnect it) or disconnected (the app was disconnected: tokens deleted).';
COMMENT ON COLUMN connections.status_reason IS 'Why the connection is revoked or disconnected.';
COMMENT ON COLUMN connections.scopes IS 'The scopes the account granted, space-separated.';
COMMENT ON COLUMN connections.connected_at IS 'When the account was last connected (or reconnected).';
COMMENT ON COLUMN connections.updated_at IS 'When the connection''s row last changed.';

COMMENT ON TABLE sync_runs IS 'One row per account, stream and run of a pass: what it read, wrote and spent, and how it ended. Its finished_at is the connector''s freshness.';
COMMENT ON COLUMN sync_runs.id IS 'The run''s number (runId in the logs).';
COMMENT ON COLUMN sync_runs.account_id IS 'The account (connections.account_id).';
COMMENT ON COLUMN sync_runs.stream IS 'The stream: users, products, clients, properties, requests, quotes, jobs, visits or invoices.';
COMMENT ON COLUMN sync_runs.kind IS 'full (the whole collection; deletions found at its end) or incremental (what changed since the high-water mark).';
COMMENT ON COLUMN sync_runs.started_at IS 'When the run began.';
COMMENT ON COLUMN sync_runs.finished_at IS 'When the run ended (null while it runs).';
COMMENT ON COLUMN sync_runs.outcome IS 'running, succeeded, failed, revoked (the account needs reconnecting), interrupted (stopped; the next run resumes) or skipped (another process held the account).';
COMMENT ON COLUMN sync_runs.pages IS 'Pages landed.';
COMMENT ON COLUMN sync_runs.rows IS 'Rows received from the service.';
COMMENT ON COLUMN sync_runs.rows_written IS 'Rows inserted or changed (an unchanged row is not rewritten).';
COMMENT ON COLUMN sync_runs.rows_deleted IS 'Rows marked deleted by the end of a full pass.';
COMMENT ON COLUMN sync_runs.cost_points IS 'Query cost points the run spent of the account''s budget.';
COMMENT ON COLUMN sync_runs.overhead_points IS 'Of those, points spent on being exact: rows read twice to join pages, pages asked again, the end-of-pass checks.';
COMMENT ON COLUMN sync_runs.rows_confirmed IS 'Rows about to be marked deleted that the end-of-pass check found alive at the service.';
COMMENT ON COLUMN sync_runs.throttle_wait_ms IS 'Milliseconds spent waiting for the account''s budget to refill.';
COMMENT ON COLUMN sync_runs.throttled IS 'Answers the service refused as THROTTLED (zero in steady state).';
COMMENT ON COLUMN sync_runs.error IS 'Why the run failed.';

COMMENT ON TABLE sync_checkpoints IS 'Where each account''s stream stands: the pass in progress (resumed from here after any interruption), the high-water mark, the last full pass.';
COMMENT ON COLUMN sync_checkpoints.account_id IS 'The account (connections.account_id).';
COMMENT ON COLUMN sync_checkpoints.stream IS 'The stream.';
COMMENT ON COLUMN sync_checkpoints.pass_kind IS 'The kind of the pass in progress, full or incremental; null when none is.';
COMMENT ON COLUMN sync_checkpoints.pass_started_at IS 'When the pass in progress began.';
COMMENT ON COLUMN sync_checkpoints.partition IS 'Which of the stream''s lists the pass is in (users: one list per status).';
COMMENT ON COLUMN sync_checkpoints.position IS 'Rows of the pass''s order landed so far: where it resumes.';
COMMENT ON COLUMN sync_checkpoints.anchors IS 'The ids of the last landed page, in order: a resumed pass joins its first page on them.';
COMMENT ON COLUMN sync_checkpoints.shifted IS 'The list moved under the pass (a row deleted or created behind it): its end lists the ids before marking deletions.';
COMMENT ON COLUMN sync_checkpoints.tracks_seen IS 'The pass records the ids it sees (sync_pass_seen) to find deletions at its end.';
COMMENT ON COLUMN sync_checkpoints.deletions_unchecked IS 'Why the last full pass marked nothing deleted (the listing its sweep needed was incomplete); null when it checked them.';
COMMENT ON COLUMN sync_checkpoints.rows_withheld IS 'Rows the service counts but did not list to this app, by the last complete listing (it leaves some out of its pages).';
COMMENT ON COLUMN sync_checkpoints.high_water_mark IS 'The newest updatedAt landed (service time): an incremental pass reads from here minus SYNC_INCREMENTAL_OVERLAP.';
COMMENT ON COLUMN sync_checkpoints.last_full_pass_at IS 'When the last completed full pass began: the next one is due SYNC_FULL_PASS_EVERY later.';
COMMENT ON COLUMN sync_checkpoints.last_incremental_pass_at IS 'When the last incremental pass ended.';
COMMENT ON COLUMN sync_checkpoints.full_pass_requested_at IS 'A change event asked for a full pass (a record only a full pass can bring): the next sync runs one.';
COMMENT ON COLUMN sync_checkpoints.updated_at IS 'When the checkpoint last changed.';

COMMENT ON TABLE sync_pass_seen IS 'The ids the full pass in progress has seen, per account and stream: its end marks every other row deleted. Emptied when the pass ends.';
COMMENT ON COLUMN sync_pass_seen.account_id IS 'The account (connections.account_id).';
COMMENT ON COLUMN sync_pass_seen.stream IS 'The stream.';
COMMENT ON COLUMN sync_pass_seen.id IS 'The id of a row the pass landed.';

COMMENT ON TABLE webhook_events IS 'Every webhook delivery, once: the queue of change events (records read again and landed, or marked deleted).';
COMMENT ON COLUMN webhook_events.event_id IS 'The hash of what the delivery says: a redelivery is the same row.';
COMMENT ON COLUMN webhook_events.topic IS 'The service''s topic, e.g. JOB_UPDATE, INVOICE_DESTROY, APP_DISCONNECT.';
COMMENT ON COLUMN webhook_events.account_id IS 'The connection the delivery matched (connections.account_id); null when none did.';
COMMENT ON COLUMN webhook_events.sent_account_id IS 'The account id as the delivery spelled it.';
COMMENT ON COLUMN webhook_events.app_id IS 'The app the delivery was for.';
COMMENT ON COLUMN webhook_events.item_id IS 'The id of the record that changed.';
COMMENT ON COLUMN webhook_events.occurred_at IS 'When the change happened, by the service''s clock.';
COMMENT ON COLUMN webhook_events.received_at IS 'When the delivery arrived.';
COMMENT ON COLUMN webhook_events.state IS 'pending, applied, failed (given up after EVENTS_MAX_ATTEMPTS), deferred, ignored or unmatched (no connection matched).';
COMMENT ON COLUMN webhook_events.attempts IS 'Times it was tried.';
COMMENT ON COLUMN webhook_events.next_attempt_at IS 'A pending event is not applied before this.';
COMMENT ON COLUMN webhook_events.applied_at IS 'When it was applied.';
COMMENT ON COLUMN webhook_events.error IS 'Why its last attempt failed.';

COMMENT ON TABLE oauth_tokens IS 'Each account''s access and refresh token, AES-256-GCM encrypted under TOKEN_ENCRYPTION_KEY (the key''s id in front of each value).';
COMMENT ON COLUMN oauth_tokens.account_id IS 'The account (connections.account_id).';
COMMENT ON COLUMN oauth_tokens.access_token IS 'The access token, encrypted.';
COMMENT ON COLUMN oauth_tokens.refresh_token IS 'The refresh token, encrypted.';
COMMENT ON COLUMN oauth_tokens.access_expires_at IS 'When the access token expires (it is refreshed before).';
COMMENT ON COLUMN oauth_tokens.version IS 'Grows on every write: a process that lost a refresh race can tell the token changed under it.';
COMMENT ON COLUMN oauth_tokens.updated_at IS 'When the tokens were last written.';

COMMENT ON TABLE oauth_pending IS 'Authorization flows begun by serve (/oauth/start), kept 10 minutes, so a callback can land on any replica.';
COMMENT ON COLUMN oauth_pending.state IS 'The flow''s state parameter.';
COMMENT ON COLUMN oauth_pending.code_verifier IS 'The flow''s PKCE verifier, encrypted.';
COMMENT ON COLUMN oauth_pending.created_at IS 'When the flow began.';
COMMENT ON COLUMN oauth_pending.expires_at IS 'When the flow is no longer accepted.';

COMMENT ON TABLE token_keys IS 'The key check: the id of the key the tokens are written under and an HMAC of a constant under it (never the key).';
COMMENT ON COLUMN token_keys.singleton IS 'Always true: one row.';
COMMENT ON COLUMN token_keys.key_id IS 'The id of the current key (8 hex characters derived from it).';
COMMENT ON COLUMN token_keys.check_value IS 'HMAC-SHA256 of a constant under the key: proves a key without revealing it.';
COMMENT ON COLUMN token_keys.updated_at IS 'When the key was recorded or rotated.';

COMMENT ON TABLE schema_migrations IS 'The migrations of sql/ applied to this schema (account-sync migrate).';

COMMENT ON COLUMN sync_checkpoints.data_current_at IS 'When the stream''s data of the account was last known current: the start of its last successful pass, or the read of its last applied change events.';
COMMENT ON COLUMN oauth_pending.client_address IS 'The client address that began the flow (pending flows are capped per address).';
COMMENT ON COLUMN schema_migrations.migration_id IS 'The migration''s number (sql/NNN_name.sql).';
COMMENT ON COLUMN schema_migrations.name IS 'The migration''s name.';
COMMENT ON COLUMN schema_migrations.created_at IS 'When it was applied.';

COMMENT ON VIEW stream_freshness IS 'Per stream, the time up to which every active account''s data is known current (the stalest account decides): dbt''s source freshness.';
COMMENT ON COLUMN stream_freshness.stream IS 'The stream.';
COMMENT ON COLUMN stream_freshness.data_current_at IS 'Every active account''s data of the stream was known current at this time (one that never finished a pass counts from when it connected).';
COMMENT ON COLUMN stream_freshness.accounts IS 'Active accounts counted.';

COMMENT ON TABLE api_versions IS 'What the service answered to the API version asked for (SERVICE_GRAPHQL_VERSION): the version that answered and the deprecation warning it carried.';
COMMENT ON COLUMN api_versions.requested IS 'The version asked for.';
COMMENT ON COLUMN api_versions.answered IS 'The version that answered (another one when the asked one was removed).';
COMMENT ON COLUMN api_versions.answered_since IS 'Since when that version answers.';
COMMENT ON COLUMN api_versions.warning IS 'The deprecation warning the answers carry, if any.';
COMMENT ON COLUMN api_versions.warned_since IS 'Since when the warning is given.';
COMMENT ON COLUMN api_versions.observed_at IS 'When an answer was last seen.';

COMMENT ON TABLE account_health IS 'Each account''s run outcomes in a row (alerts: an account that failed twice in a row).';
COMMENT ON COLUMN account_health.account_id IS 'The account (connections.account_id).';
COMMENT ON COLUMN account_health.last_outcome IS 'The outcome of the account''s last run.';
COMMENT ON COLUMN account_health.failures_in_a_row IS 'Runs that failed in a row (0 after a success).';
COMMENT ON COLUMN account_health.last_error IS 'Why the last failed run failed.';
COMMENT ON COLUMN account_health.updated_at IS 'When the row last changed.';

COMMENT ON TABLE alert_notices IS 'Conditions sent to ALERT_WEBHOOK_URL, one row while each holds: sent once, and again after it cleared.';
COMMENT ON COLUMN alert_notices.account_id IS 'The account (connections.account_id); empty for conditions of the whole installation (the API version).';
COMMENT ON COLUMN alert_notices.condition IS 'What holds, e.g. an account failing in a row, a stale stream, a replaced API version.';
COMMENT ON COLUMN alert_notices.detail IS 'What the message said.';
COMMENT ON COLUMN alert_notices.raised_at IS 'When the condition was first seen.';
COMMENT ON COLUMN alert_notices.attempted_at IS 'When sending it was last tried.';
COMMENT ON COLUMN alert_notices.notified_at IS 'When it was sent (null while not yet).';

COMMENT ON TABLE reader_accounts IS 'Which accounts each reader role may read (account-sync grant-reader): row-level security shows a reader only these accounts'' rows.';
COMMENT ON COLUMN reader_accounts.role_name IS 'The Postgres role.';
COMMENT ON COLUMN reader_accounts.account_id IS 'An account it may read (connections.account_id).';
COMMENT ON COLUMN reader_accounts.granted_at IS 'When it was granted.';
