-- The data dictionary: a comment on every table, view and column of the warehouse, read by
-- `recon describe [TABLE]` and docs/dictionary.md (`python -m recon.analyst.dictionary`).
-- Applied after the migrations (working copy) and after the views (publish: recreating a
-- view drops its comments). One statement per line, grouped by table; a new table or
-- column adds its lines here (tests/analyst/test_dictionary.py fails on one without).
-- A `<table>_major` view's column that means what the table's column means is not repeated:
-- it takes the table's words (recon.warehouse.dictionary); only its own columns are written here.
-- The list resources' tables (payments, refunds, disputes, …) take their words from their
-- catalogue entries (recon.catalogue.resources: Resource.words, Column.words; recon.warehouse.catalogue_tables).

-- api_calls
COMMENT ON TABLE api_calls IS 'Every HTTP attempt of every run (secrets never stored: no headers, redacted query).';
COMMENT ON COLUMN api_calls.run_id IS 'The run that made the call.';
COMMENT ON COLUMN api_calls.call_id IS 'One logical call: all its attempts share it.';
COMMENT ON COLUMN api_calls.resource IS 'The resource listed or fetched.';
COMMENT ON COLUMN api_calls.method IS 'HTTP method.';
COMMENT ON COLUMN api_calls.path IS 'Path under /api/v1.';
COMMENT ON COLUMN api_calls.query IS 'Query string, redacted.';
COMMENT ON COLUMN api_calls.attempt IS '1 for the first try, 2 for the first retry, …';
COMMENT ON COLUMN api_calls.http_status IS 'The HTTP status; NULL when no answer came (transport failure).';
COMMENT ON COLUMN api_calls.error IS 'The error envelope''s error, or a transport kind.';
COMMENT ON COLUMN api_calls.message IS 'The error message.';
COMMENT ON COLUMN api_calls.request_id IS 'The provider''s requestId (envelope or X-Request-Id): quote it to the provider.';
COMMENT ON COLUMN api_calls.latency_ms IS 'How long the attempt took, in milliseconds.';
COMMENT ON COLUMN api_calls.outcome IS 'ok | retry | failed (failed = gave up for good).';
COMMENT ON COLUMN api_calls.attempted_at IS 'When the attempt went out.';
COMMENT ON COLUMN api_calls.waited_ms IS 'How long it was held back first (rate limiter, backoff), in milliseconds.';

-- check_runs
COMMENT ON TABLE check_runs IS 'Every check''s verdict per run: passed, failed, not evaluated (with why) or errored.';
COMMENT ON COLUMN check_runs.run_id IS 'The run.';
COMMENT ON COLUMN check_runs.check_name IS 'The check (sql/checks/<name>.sql).';
COMMENT ON COLUMN check_runs.severity IS 'error | warn | info.';
COMMENT ON COLUMN check_runs.status IS 'passed | failed | not_evaluated | errored.';
COMMENT ON COLUMN check_runs.reason IS 'Why not_evaluated or errored.';
COMMENT ON COLUMN check_runs.description IS 'What a finding of the check means, with the night''s settings filled in.';
COMMENT ON COLUMN check_runs.finding_count IS 'Findings it reported this run.';
COMMENT ON COLUMN check_runs.opening_count IS 'Open findings it carried in from the run before.';
COMMENT ON COLUMN check_runs.new_count IS 'Findings seen for the first time, and those that came back (reopened).';
COMMENT ON COLUMN check_runs.resolved_count IS 'Findings of the run before it no longer reports.';
COMMENT ON COLUMN check_runs.closing_count IS 'Open findings after this run.';
COMMENT ON COLUMN check_runs.duration_ms IS 'How long it took, in milliseconds.';
COMMENT ON COLUMN check_runs.coverage IS 'What an evaluated verdict covers, in words.';

-- currencies
COMMENT ON TABLE currencies IS 'ISO 4217 currencies and their exponents (JPY 0, EUR 2, BHD 3), used by money().';
COMMENT ON COLUMN currencies.code IS 'ISO 4217 code.';
COMMENT ON COLUMN currencies.exponent IS 'Digits after the decimal point (NULL: no minor unit, e.g. XAU).';
COMMENT ON COLUMN currencies.name IS 'The currency''s name.';

-- failed_calls
COMMENT ON VIEW failed_calls IS 'The calls that failed for good (after their retries), one row per logical call, with every request id to quote to the provider.';
COMMENT ON COLUMN failed_calls.run_id IS 'The run.';
COMMENT ON COLUMN failed_calls.call_id IS 'The logical call.';
COMMENT ON COLUMN failed_calls.resource IS 'The resource.';
COMMENT ON COLUMN failed_calls.method IS 'HTTP method.';
COMMENT ON COLUMN failed_calls.path IS 'Path under /api/v1.';
COMMENT ON COLUMN failed_calls.query IS 'Query string, redacted.';
COMMENT ON COLUMN failed_calls.http_status IS 'The last attempt''s HTTP status (NULL: no answer).';
COMMENT ON COLUMN failed_calls.error IS 'The last attempt''s error.';
COMMENT ON COLUMN failed_calls.message IS 'The last attempt''s message.';
COMMENT ON COLUMN failed_calls.request_id IS 'The last attempt''s request id.';
COMMENT ON COLUMN failed_calls.attempts IS 'How many attempts were made.';
COMMENT ON COLUMN failed_calls.attempted_at IS 'When the last attempt went out.';
COMMENT ON COLUMN failed_calls.request_ids IS 'Every attempt''s request id.';

-- field_presence
COMMENT ON TABLE field_presence IS 'Per run and resource: how many landed records carry each mapped field (a check needing a field no record has is not evaluated).';
COMMENT ON COLUMN field_presence.run_id IS 'The run.';
COMMENT ON COLUMN field_presence.resource IS 'The resource.';
COMMENT ON COLUMN field_presence.field IS 'recon''s name for the field: payment_id, amount, created_at, …';
COMMENT ON COLUMN field_presence.json_path IS 'Where it was read in raw, e.g. $."paymentId".';
COMMENT ON COLUMN field_presence.records IS 'Records of the resource landed in the run.';
COMMENT ON COLUMN field_presence.present IS 'Of which carry the field (not JSON null).';

-- finding_acknowledgements
COMMENT ON VIEW finding_acknowledgements IS 'Per finding of each run: its latest acknowledgement and whether it still holds (same amounts, not lapsed).';
COMMENT ON COLUMN finding_acknowledgements.run_id IS 'The run.';
COMMENT ON COLUMN finding_acknowledgements.finding_key IS 'The finding.';
COMMENT ON COLUMN finding_acknowledgements.check_name IS 'The check.';
COMMENT ON COLUMN finding_acknowledgements.state IS 'The finding''s state in that run.';
COMMENT ON COLUMN finding_acknowledgements.acknowledged IS 'True while the latest action is an ack taken with the amounts it still has and not past until.';
COMMENT ON COLUMN finding_acknowledgements.last_action IS 'ack | unack | assign | resolve (the latest work action).';
COMMENT ON COLUMN finding_acknowledgements.who IS 'Who acted last.';
COMMENT ON COLUMN finding_acknowledgements.acted_at IS 'When.';
COMMENT ON COLUMN finding_acknowledgements.note IS 'Their note.';
COMMENT ON COLUMN finding_acknowledgements.until IS 'When the ack lapses.';

-- finding_acks
COMMENT ON TABLE finding_acks IS 'The audit trail (recon findings ack/unack/assign/resolve, recon close, and other writers'' lines), as loaded from <db>.acks.jsonl.';
COMMENT ON COLUMN finding_acks.seq IS 'Line number in the log.';
COMMENT ON COLUMN finding_acks.action IS 'ack | unack | assign | resolve (work states); close | reopen (a period); others written by other commands.';
COMMENT ON COLUMN finding_acks.finding_key IS 'The finding.';
COMMENT ON COLUMN finding_acks.who IS 'Who acted: RECON_USER, the OS user as os:<name>, or a workbench user.';
COMMENT ON COLUMN finding_acks.acted_at IS 'When.';
COMMENT ON COLUMN finding_acks.note IS 'Why (required for an ack).';
COMMENT ON COLUMN finding_acks.until IS 'The ack lapses after this day.';
COMMENT ON COLUMN finding_acks.currency IS 'The finding''s currency when acknowledged.';
COMMENT ON COLUMN finding_acks.amount_minor IS 'Its amount when acknowledged.';
COMMENT ON COLUMN finding_acks.sides IS 'Ledger findings: both sides as their detail said when acknowledged.';
COMMENT ON COLUMN finding_acks.owner IS 'assign: who investigates the finding.';
COMMENT ON COLUMN finding_acks.reason IS 'resolve: the reason code (timing, provider_error, books_error, written_off, duplicate, other).';
COMMENT ON COLUMN finding_acks.details IS 'Every other field of the line, as JSON (a period''s sign-off, a manual match, …).';
COMMENT ON COLUMN finding_acks.line_hash IS 'SHA-256 of the line as written (recon findings verify compares the trail with it).';
COMMENT ON COLUMN finding_acks.prev_hash IS 'SHA-256 of the line before it, as the line carries it (the hash chain).';

-- trail_record
COMMENT ON TABLE trail_record IS 'Since which line every line of the audit trail is recorded in finding_acks as it is written (recon findings verify).';
COMMENT ON COLUMN trail_record.since_seq IS 'The first line recorded as written; lines before it were copied at a load.';
COMMENT ON COLUMN trail_record.recorded_since IS 'When recording began.';

-- finding_states
COMMENT ON VIEW finding_states IS 'Every finding row with its work state as the audit trail decides it (docs/closing.md).';
COMMENT ON COLUMN finding_states.run_id IS 'The run.';
COMMENT ON COLUMN finding_states.finding_key IS 'The finding.';
COMMENT ON COLUMN finding_states.work_state IS 'open | investigating | acknowledged | resolved_manually; NULL once the checks resolved it.';
COMMENT ON COLUMN finding_states.owner IS 'Who investigates it (the latest assign).';
COMMENT ON COLUMN finding_states.work_by IS 'Who made the latest decision.';
COMMENT ON COLUMN finding_states.work_at IS 'When.';
COMMENT ON COLUMN finding_states.work_note IS 'Its note.';
COMMENT ON COLUMN finding_states.work_reason IS 'resolve: the reason code.';
COMMENT ON COLUMN finding_states.work_until IS 'ack: the day it lapses after.';
COMMENT ON COLUMN finding_states.lapsed_reason IS 'Why an acknowledgement or manual resolution no longer holds (amount changed, until passed).';

-- finding_work
COMMENT ON VIEW finding_work IS 'Per finding key: the latest work decision of the audit trail and the owner.';
COMMENT ON COLUMN finding_work.finding_key IS 'The finding.';
COMMENT ON COLUMN finding_work.action IS 'ack | unack | assign | resolve.';
COMMENT ON COLUMN finding_work.who IS 'The OS user who decided.';
COMMENT ON COLUMN finding_work.acted_at IS 'When.';
COMMENT ON COLUMN finding_work.note IS 'The note.';
COMMENT ON COLUMN finding_work.until IS 'ack: the day it lapses after.';
COMMENT ON COLUMN finding_work.reason IS 'resolve: the reason code.';
COMMENT ON COLUMN finding_work.currency IS 'The finding''s currency when decided.';
COMMENT ON COLUMN finding_work.amount_minor IS 'Its amount when decided.';
COMMENT ON COLUMN finding_work.sides IS 'Ledger findings: both sides as their detail said when decided.';
COMMENT ON COLUMN finding_work.owner IS 'Who investigates it (the latest assign).';

-- findings
COMMENT ON TABLE findings IS 'Every finding of every run: one row per (run, finding).';
COMMENT ON COLUMN findings.run_id IS 'The run that reported it.';
COMMENT ON COLUMN findings.check_name IS 'The check that raised it.';
COMMENT ON COLUMN findings.severity IS 'error | warn | info.';
COMMENT ON COLUMN findings.finding_key IS 'check_name:entity_id:issue_type, the same from night to night.';
COMMENT ON COLUMN findings.state IS 'new (first seen this run) | open (seen before) | reopened (came back after it was resolved) | resolved.';
COMMENT ON COLUMN findings.entity IS 'What it is about: payment, refund, invoice, order, …';
COMMENT ON COLUMN findings.entity_id IS 'That record''s id (the reference for an order).';
COMMENT ON COLUMN findings.currency IS 'ISO 4217 code of amount_minor (NULL when the finding has no amount).';
COMMENT ON COLUMN findings.amount_minor IS 'The amount at stake in minor units of currency.';
COMMENT ON COLUMN findings.issue_type IS 'What is wrong, in one word.';
COMMENT ON COLUMN findings.detail IS 'What is wrong, in words.';
COMMENT ON COLUMN findings.first_seen_run IS 'The run that first reported it.';
COMMENT ON COLUMN findings.reopen_count IS 'How many times the finding came back after it was resolved (state reopened); it keeps its first sighting.';
COMMENT ON COLUMN findings.item_at IS 'The business date of the item it is about: the order''s, payment''s, refund''s, dispute''s, invoice''s or intent''s own date.';

-- findings_current
COMMENT ON VIEW findings_current IS 'Every finding ever raised, in its latest state, with when it was first and last seen and its age.';
COMMENT ON COLUMN findings_current.finding_key IS 'check_name:entity_id:issue_type, the same from night to night.';
COMMENT ON COLUMN findings_current.check_name IS 'The check that raised it.';
COMMENT ON COLUMN findings_current.severity IS 'error | warn | info.';
COMMENT ON COLUMN findings_current.state IS 'new | open | reopened | resolved (resolved: the latest run no longer reports it).';
COMMENT ON COLUMN findings_current.entity IS 'What it is about: payment, refund, invoice, order, …';
COMMENT ON COLUMN findings_current.entity_id IS 'That record''s id (the reference for an order).';
COMMENT ON COLUMN findings_current.currency IS 'ISO 4217 code of amount_minor (NULL when the finding has no amount).';
COMMENT ON COLUMN findings_current.amount_minor IS 'The amount at stake in minor units of currency.';
COMMENT ON COLUMN findings_current.amount IS 'amount_minor in major units (money()).';
COMMENT ON COLUMN findings_current.issue_type IS 'What is wrong, in one word.';
COMMENT ON COLUMN findings_current.detail IS 'What is wrong, in words.';
COMMENT ON COLUMN findings_current.first_seen_run IS 'The run that first reported it.';
COMMENT ON COLUMN findings_current.first_seen_at IS 'Start of the run that first reported it.';
COMMENT ON COLUMN findings_current.last_seen_run IS 'The latest run that reported it open.';
COMMENT ON COLUMN findings_current.last_seen_at IS 'That run''s start.';
COMMENT ON COLUMN findings_current.age_days IS 'Days from first seen to the latest run (while open) or to the last sighting (once resolved): how long recon has known it.';
COMMENT ON COLUMN findings_current.state_run IS 'The run whose row gives the state.';
COMMENT ON COLUMN findings_current.work_state IS 'What the team decided: open | investigating | acknowledged | resolved_manually (unresolved findings only).';
COMMENT ON COLUMN findings_current.owner IS 'Who investigates it (recon findings assign).';
COMMENT ON COLUMN findings_current.work_note IS 'The note of the latest decision.';
COMMENT ON COLUMN findings_current.work_reason IS 'resolve: the reason code.';
COMMENT ON COLUMN findings_current.lapsed_reason IS 'Why an acknowledgement or manual resolution no longer holds.';
COMMENT ON COLUMN findings_current.reopen_count IS 'How many times it came back after it was resolved (state reopened): it keeps its first sighting.';
COMMENT ON COLUMN findings_current.item_at IS 'The business date of the item it is about (the order''s, payment''s, refund''s or invoice''s own date).';
COMMENT ON COLUMN findings_current.item_age_days IS 'How old the item is: days from its own date (item_at) to the latest run (while open) or to the last sighting.';
COMMENT ON COLUMN findings_current.known_days IS 'How long recon has known the break: days from first seen to the latest run (while open) or to the last sighting; age_days is its earlier name.';

-- findings_major
COMMENT ON VIEW findings_major IS 'findings with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN findings_major.amount IS 'amount_minor in major units (money()).';
COMMENT ON COLUMN findings_major.reopen_count IS 'How many times the finding came back after it was resolved.';
COMMENT ON COLUMN findings_major.item_at IS 'The business date of the item it is about.';

-- ledger_invoices
COMMENT ON TABLE ledger_invoices IS 'The merchant''s books, invoices expected: the latest snapshot.';
COMMENT ON COLUMN ledger_invoices.invoice_id IS 'The provider''s invoice id.';
COMMENT ON COLUMN ledger_invoices.customer_id IS 'The customer.';
COMMENT ON COLUMN ledger_invoices.amount_minor IS 'Amount in minor units.';
COMMENT ON COLUMN ledger_invoices.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN ledger_invoices.status IS 'An invoice status (the status map applied).';
COMMENT ON COLUMN ledger_invoices.books_status IS 'The status as the books say it.';
COMMENT ON COLUMN ledger_invoices.source IS 'The file (or query) it was read from.';
COMMENT ON COLUMN ledger_invoices.row_number IS 'Its row in the spreadsheet (header = 1), else its record number.';
COMMENT ON COLUMN ledger_invoices.run_id IS 'The run that read it.';

-- ledger_invoices_major
COMMENT ON VIEW ledger_invoices_major IS 'ledger_invoices with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN ledger_invoices_major.amount IS 'amount_minor in major units (money()).';

-- ledger_loads
COMMENT ON TABLE ledger_loads IS 'What each run read from the books.';
COMMENT ON COLUMN ledger_loads.run_id IS 'The run.';
COMMENT ON COLUMN ledger_loads.input IS 'orders | refunds | invoices.';
COMMENT ON COLUMN ledger_loads.source IS 'Files or query (database URL redacted).';
COMMENT ON COLUMN ledger_loads.rows_read IS 'Rows read.';
COMMENT ON COLUMN ledger_loads.rows_loaded IS 'Rows loaded.';
COMMENT ON COLUMN ledger_loads.rejects IS 'Rows refused.';
COMMENT ON COLUMN ledger_loads.as_of IS 'The run''s start: what ''younger than the grace'' is measured from.';
COMMENT ON COLUMN ledger_loads.grace_hours IS 'RECON_LEDGER_GRACE_HOURS that night.';
COMMENT ON COLUMN ledger_loads.loaded_at IS 'When.';
COMMENT ON COLUMN ledger_loads.suspect IS 'Why the input was held suspect: no rows, or fewer than RECON_LEDGER_MIN_RATIO of the last night''s; NULL when it was not.';
COMMENT ON COLUMN ledger_loads.accepted IS 'Who accepted a suspect input for the night, when and why (recon nightly --accept-books); NULL otherwise.';
COMMENT ON COLUMN ledger_loads.unread_sheets IS 'Sheets of the workbook(s) not read, as file[sheet]; NULL when none.';

-- ledger_matches
COMMENT ON TABLE ledger_matches IS 'Books orders against provider payments (latest run): one row per books order and per settled payment no order names.';
COMMENT ON COLUMN ledger_matches.entity IS 'order | payment.';
COMMENT ON COLUMN ledger_matches.entity_id IS 'The reference (order), else the order_id, or the payment id.';
COMMENT ON COLUMN ledger_matches.reference IS 'The order''s reference.';
COMMENT ON COLUMN ledger_matches.order_id IS 'The books'' order number.';
COMMENT ON COLUMN ledger_matches.books_amount_minor IS 'The books'' amount in minor units of books_currency.';
COMMENT ON COLUMN ledger_matches.books_currency IS 'The books'' currency.';
COMMENT ON COLUMN ledger_matches.books_status IS 'The books'' status (mapped).';
COMMENT ON COLUMN ledger_matches.payment_ids IS 'The live settled payments with the reference.';
COMMENT ON COLUMN ledger_matches.payments IS 'Live payments with the reference, any status.';
COMMENT ON COLUMN ledger_matches.settled IS 'Of which settled.';
COMMENT ON COLUMN ledger_matches.provider_amount_minor IS 'Their sum in minor units of provider_currency (NULL when one amount is unknown).';
COMMENT ON COLUMN ledger_matches.provider_currency IS 'Their currency (NULL when they are in several currencies).';
COMMENT ON COLUMN ledger_matches.provider_status IS 'confirmed / refunded (all) or partially_refunded.';
COMMENT ON COLUMN ledger_matches.provider_statuses IS 'Their statuses.';
COMMENT ON COLUMN ledger_matches.item_at IS 'The order''s (or payment''s) created_at: the item''s business date.';
COMMENT ON COLUMN ledger_matches.kind IS 'matched | split | amount_mismatch | currency_mismatch | duplicate_charge | order_missing_at_provider | unexpected_payment | not_payable | awaiting_payment | payment_missing_from_books | awaiting_books.';
COMMENT ON COLUMN ledger_matches.state IS 'matched | pending | break | none.';
COMMENT ON COLUMN ledger_matches.run_id IS 'The run.';
COMMENT ON COLUMN ledger_matches.rule IS 'The matching rule that linked the order (sql/matching/): manual, exact_reference, normalised_reference, amount_tolerance, payment_reference; NULL when none did.';
COMMENT ON COLUMN ledger_matches.difference_minor IS 'Books minus provider, kept when matched within tolerance, by a cart or by hand.';
COMMENT ON COLUMN ledger_matches.differs IS 'For a break: the fields that differ, with both values (amount, currency, status, date).';
COMMENT ON COLUMN ledger_matches.best_candidate IS 'The proposed counterpart of an unmatched order or payment (ledger_suggestions); ambiguous: … lists every equally good one.';

-- ledger_matches_major
COMMENT ON VIEW ledger_matches_major IS 'ledger_matches with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN ledger_matches_major.books_amount IS 'books_amount_minor in major units of books_currency.';
COMMENT ON COLUMN ledger_matches_major.provider_amount IS 'provider_amount_minor in major units of provider_currency.';
COMMENT ON COLUMN ledger_matches_major.rule IS 'The matching rule that linked the order.';
COMMENT ON COLUMN ledger_matches_major.difference_minor IS 'Books minus provider, kept when matched with a difference.';
COMMENT ON COLUMN ledger_matches_major.differs IS 'For a break: the fields that differ, with both values.';
COMMENT ON COLUMN ledger_matches_major.best_candidate IS 'The proposed counterpart, or ambiguous: and every candidate.';

-- ledger_orders
COMMENT ON TABLE ledger_orders IS 'The merchant''s books, orders: the snapshot the latest run read, one row per books row that converted cleanly.';
COMMENT ON COLUMN ledger_orders.reference IS 'The order''s reference (what the payment was made under).';
COMMENT ON COLUMN ledger_orders.order_id IS 'The books'' own order number.';
COMMENT ON COLUMN ledger_orders.amount_minor IS 'Order amount in minor units of currency.';
COMMENT ON COLUMN ledger_orders.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN ledger_orders.status IS 'A payment status (the status map applied).';
COMMENT ON COLUMN ledger_orders.books_status IS 'The status as the books say it.';
COMMENT ON COLUMN ledger_orders.created_at IS 'When the order was placed (the item''s business date).';
COMMENT ON COLUMN ledger_orders.source IS 'The file (or query) it was read from.';
COMMENT ON COLUMN ledger_orders.row_number IS 'Its row in the spreadsheet (header = 1), else its record number.';
COMMENT ON COLUMN ledger_orders.run_id IS 'The run that read it.';
COMMENT ON COLUMN ledger_orders.payment_reference IS 'The reference the payment was made under when it differs from the order''s own (several orders paid by one checkout).';

-- ledger_orders_major
COMMENT ON VIEW ledger_orders_major IS 'ledger_orders with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN ledger_orders_major.amount IS 'amount_minor in major units (money()).';
COMMENT ON COLUMN ledger_orders_major.payment_reference IS 'The reference the payment was made under (several orders paid by one checkout).';

-- ledger_payment_refunds
COMMENT ON TABLE ledger_payment_refunds IS 'Per settled payment the books cover: the books'' refund total against the payment''s status.';
COMMENT ON COLUMN ledger_payment_refunds.payment_id IS 'The payment.';
COMMENT ON COLUMN ledger_payment_refunds.reference IS 'Its reference.';
COMMENT ON COLUMN ledger_payment_refunds.status IS 'The provider''s status.';
COMMENT ON COLUMN ledger_payment_refunds.amount_minor IS 'The payment''s amount in minor units.';
COMMENT ON COLUMN ledger_payment_refunds.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN ledger_payment_refunds.books_refunds IS 'Books refunds of it.';
COMMENT ON COLUMN ledger_payment_refunds.books_total_minor IS 'Their total in minor units.';
COMMENT ON COLUMN ledger_payment_refunds.books_settled_minor IS 'Their total without those younger than the grace.';
COMMENT ON COLUMN ledger_payment_refunds.expected IS 'confirmed | partially_refunded | refunded | over_refunded (what the books'' total implies).';
COMMENT ON COLUMN ledger_payment_refunds.state IS 'consistent | pending | break.';
COMMENT ON COLUMN ledger_payment_refunds.run_id IS 'The run.';

-- ledger_payment_refunds_major
COMMENT ON VIEW ledger_payment_refunds_major IS 'ledger_payment_refunds with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN ledger_payment_refunds_major.amount IS 'amount_minor in major units.';
COMMENT ON COLUMN ledger_payment_refunds_major.books_total IS 'books_total_minor in major units.';
COMMENT ON COLUMN ledger_payment_refunds_major.books_settled IS 'books_settled_minor in major units.';

-- ledger_refund_matches
COMMENT ON TABLE ledger_refund_matches IS 'Books refunds against provider refunds (latest run): each books refund (side = books) and each counted provider refund the books do not list (side = provider).';
COMMENT ON COLUMN ledger_refund_matches.side IS 'books | provider.';
COMMENT ON COLUMN ledger_refund_matches.refund_key IS 'Refund id, or <source>#<row> for an id-less books row.';
COMMENT ON COLUMN ledger_refund_matches.refund_id IS 'The refund id.';
COMMENT ON COLUMN ledger_refund_matches.books_payment_id IS 'The payment as the books give it.';
COMMENT ON COLUMN ledger_refund_matches.books_reference IS 'The reference as the books give it.';
COMMENT ON COLUMN ledger_refund_matches.books_amount_minor IS 'The books'' amount in minor units of books_currency.';
COMMENT ON COLUMN ledger_refund_matches.books_currency IS 'The books'' currency.';
COMMENT ON COLUMN ledger_refund_matches.payment_id IS 'The live payment it resolves to.';
COMMENT ON COLUMN ledger_refund_matches.resolution IS 'payment_id | reference | unknown_payment | ambiguous_reference | provider.';
COMMENT ON COLUMN ledger_refund_matches.payment_currency IS 'That payment''s currency.';
COMMENT ON COLUMN ledger_refund_matches.provider_payment_id IS 'The provider refund''s payment.';
COMMENT ON COLUMN ledger_refund_matches.provider_amount_minor IS 'The provider''s amount in minor units of provider_currency.';
COMMENT ON COLUMN ledger_refund_matches.provider_currency IS 'The provider''s currency.';
COMMENT ON COLUMN ledger_refund_matches.provider_status IS 'The provider refund''s status.';
COMMENT ON COLUMN ledger_refund_matches.provider_counted IS 'Counts toward the payment''s refunded total (NULL: no provider refund of that id).';
COMMENT ON COLUMN ledger_refund_matches.item_at IS 'The refund''s business date.';
COMMENT ON COLUMN ledger_refund_matches.young IS 'Younger than the grace: pending, not a break.';
COMMENT ON COLUMN ledger_refund_matches.run_id IS 'The run.';

-- ledger_refund_matches_major
COMMENT ON VIEW ledger_refund_matches_major IS 'ledger_refund_matches with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN ledger_refund_matches_major.books_amount IS 'books_amount_minor in major units of books_currency.';
COMMENT ON COLUMN ledger_refund_matches_major.provider_amount IS 'provider_amount_minor in major units of provider_currency.';

-- ledger_refunds
COMMENT ON TABLE ledger_refunds IS 'The merchant''s books, refunds issued: the latest snapshot.';
COMMENT ON COLUMN ledger_refunds.refund_id IS 'The provider''s refund id, when the books know it.';
COMMENT ON COLUMN ledger_refunds.payment_id IS 'The payment refunded (or reference).';
COMMENT ON COLUMN ledger_refunds.reference IS 'The order''s reference (or payment_id).';
COMMENT ON COLUMN ledger_refunds.amount_minor IS 'Refund amount in minor units.';
COMMENT ON COLUMN ledger_refunds.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN ledger_refunds.created_at IS 'When the refund was issued (the item''s business date).';
COMMENT ON COLUMN ledger_refunds.source IS 'The file (or query) it was read from.';
COMMENT ON COLUMN ledger_refunds.row_number IS 'Its row in the spreadsheet (header = 1), else its record number.';
COMMENT ON COLUMN ledger_refunds.run_id IS 'The run that read it.';

-- ledger_refunds_major
COMMENT ON VIEW ledger_refunds_major IS 'ledger_refunds with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN ledger_refunds_major.amount IS 'amount_minor in major units (money()).';

-- ledger_rejects
COMMENT ON TABLE ledger_rejects IS 'Books rows refused, with the reason (nothing is dropped silently).';
COMMENT ON COLUMN ledger_rejects.run_id IS 'The run.';
COMMENT ON COLUMN ledger_rejects.input IS 'orders | refunds | invoices.';
COMMENT ON COLUMN ledger_rejects.source IS 'The file or query.';
COMMENT ON COLUMN ledger_rejects.row_number IS 'The row (spreadsheet numbering).';
COMMENT ON COLUMN ledger_rejects.reason IS 'Why it was refused.';
COMMENT ON COLUMN ledger_rejects.raw IS 'The row''s mapped fields as read (text).';

-- live_records
COMMENT ON VIEW live_records IS 'Every record of every resource in one place, one row each (gone ones too), with each resource''s status, money and date columns under one name: what checks about every resource read. Generated from the resource catalogue.';
COMMENT ON COLUMN live_records.resource IS 'The resource (its table): payments, refunds, …';
COMMENT ON COLUMN live_records.entity IS 'What findings about it name: payment, refund, …';
COMMENT ON COLUMN live_records.id IS 'The record''s id.';
COMMENT ON COLUMN live_records.status IS 'Its status (a payment method: its type); NULL where the resource has none.';
COMMENT ON COLUMN live_records.amount_minor IS 'Its amount in minor units (invoices: the amount due); NULL where the resource has no money.';
COMMENT ON COLUMN live_records.currency IS 'ISO 4217 code of the amount.';
COMMENT ON COLUMN live_records.created_at IS 'When the provider created it (the mapped createdAt), when known.';
COMMENT ON COLUMN live_records.first_seen_run IS 'The run that first read it.';
COMMENT ON COLUMN live_records.last_seen_run IS 'The last run that read it.';
COMMENT ON COLUMN live_records.gone_in_run IS 'The run whose complete scan no longer listed it; NULL while it is live.';
COMMENT ON COLUMN live_records.raw IS 'The record as received (JSON), personal data included.';

-- money_paths
COMMENT ON TABLE money_paths IS 'Where each resource''s amount and currency are in the raw record, from the resource catalogue (to word a value the loader could not type).';
COMMENT ON COLUMN money_paths.resource IS 'The resource.';
COMMENT ON COLUMN money_paths.column_name IS 'amount_minor or currency.';
COMMENT ON COLUMN money_paths.field IS 'The mapped field ([fields.*] in recon.toml) the path starts from; NULL for a fixed path.';
COMMENT ON COLUMN money_paths.default_path IS 'The JSON path by default (a mapped field: its default name).';
COMMENT ON COLUMN money_paths.suffix IS 'What is read inside the field, e.g. ."amountMinor" of a Money object.';

-- night_over_night
COMMENT ON VIEW night_over_night IS 'What changed since the previous complete run: findings new, resolved or changed amount (kind = finding), record versions written since (kind = record).';
COMMENT ON COLUMN night_over_night.kind IS 'finding | record.';
COMMENT ON COLUMN night_over_night.name IS 'The check (findings) or table (records).';
COMMENT ON COLUMN night_over_night.severity IS 'The check''s severity (findings).';
COMMENT ON COLUMN night_over_night.change IS 'finding: new | resolved | amount_changed; record: new | changed | gone | returned.';
COMMENT ON COLUMN night_over_night.entity IS 'What it is about.';
COMMENT ON COLUMN night_over_night.entity_id IS 'Its id.';
COMMENT ON COLUMN night_over_night.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN night_over_night.amount_minor_before IS 'Amount in minor units the night before.';
COMMENT ON COLUMN night_over_night.amount_minor_after IS 'Amount in minor units tonight.';
COMMENT ON COLUMN night_over_night.detail IS 'The finding''s detail.';
COMMENT ON COLUMN night_over_night.amount_before IS 'amount_minor_before in major units.';
COMMENT ON COLUMN night_over_night.amount_after IS 'amount_minor_after in major units.';
COMMENT ON COLUMN night_over_night.since_run IS 'The previous complete run.';
COMMENT ON COLUMN night_over_night.run_id IS 'The latest run.';

-- open_invoices
COMMENT ON VIEW open_invoices IS 'Every live open invoice with how overdue it is, as of the latest run''s start.';
COMMENT ON COLUMN open_invoices.id IS 'Invoice id.';
COMMENT ON COLUMN open_invoices.customer_id IS 'Customer.';
COMMENT ON COLUMN open_invoices.subscription_id IS 'Subscription billed.';
COMMENT ON COLUMN open_invoices.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN open_invoices.amount_due_minor IS 'Amount due in minor units.';
COMMENT ON COLUMN open_invoices.amount_due IS 'Amount due in major units (money()).';
COMMENT ON COLUMN open_invoices.due_date IS 'Due date (NULL: unknown).';
COMMENT ON COLUMN open_invoices.open_since IS 'When it was created, else first seen.';
COMMENT ON COLUMN open_invoices.days_overdue IS 'Days past the due date at as_of (negative: not yet due; NULL: no due date).';
COMMENT ON COLUMN open_invoices.aging_bucket IS 'not yet due | 0-30 | 31-60 | 61-90 | 90+.';
COMMENT ON COLUMN open_invoices.as_of IS 'The latest run''s start.';

-- record_versions
COMMENT ON TABLE record_versions IS 'Every version of every record: a new row when its content changes, first appears, goes or returns. ''When did this payment become refunded'' is a query here.';
COMMENT ON COLUMN record_versions.entity IS 'The table the record lives in: payments, refunds, …';
COMMENT ON COLUMN record_versions.id IS 'The record''s id.';
COMMENT ON COLUMN record_versions.version IS '1, 2, … per (entity, id).';
COMMENT ON COLUMN record_versions.run_id IS 'The run that saw this version first.';
COMMENT ON COLUMN record_versions.change IS 'new | changed | gone | returned.';
COMMENT ON COLUMN record_versions.status IS 'The record''s status at this version.';
COMMENT ON COLUMN record_versions.amount_minor IS 'Its amount at this version, in minor units.';
COMMENT ON COLUMN record_versions.currency IS 'Its currency at this version.';
COMMENT ON COLUMN record_versions.content_hash IS 'Hash of the record at this version.';
COMMENT ON COLUMN record_versions.raw IS 'The record at this version; NULL for the latest version (then it is the current table''s raw).';

-- record_versions_major
COMMENT ON VIEW record_versions_major IS 'record_versions with the amounts in major units beside the minor ones, without raw.';
COMMENT ON COLUMN record_versions_major.amount IS 'amount_minor in major units (money()).';

-- refund_payments
COMMENT ON VIEW refund_payments IS 'Each live refund beside its payment (for the refund checks and counted_refunds).';
COMMENT ON COLUMN refund_payments.id IS 'The refund id.';
COMMENT ON COLUMN refund_payments.payment_id IS 'The payment it names.';
COMMENT ON COLUMN refund_payments.amount_minor IS 'Refund amount in minor units.';
COMMENT ON COLUMN refund_payments.currency IS 'Refund currency.';
COMMENT ON COLUMN refund_payments.status IS 'Refund status.';
COMMENT ON COLUMN refund_payments.created_at IS 'Refund created at.';
COMMENT ON COLUMN refund_payments.live_payment_id IS 'The payment''s id when it is live (NULL: unknown or gone).';
COMMENT ON COLUMN refund_payments.payment_status IS 'The payment''s status.';
COMMENT ON COLUMN refund_payments.payment_currency IS 'The payment''s currency.';
COMMENT ON COLUMN refund_payments.payment_amount_minor IS 'The payment''s amount in minor units.';

-- rejects
COMMENT ON TABLE rejects IS 'Records that could not be loaded, kept whole with the reason.';
COMMENT ON COLUMN rejects.run_id IS 'The run.';
COMMENT ON COLUMN rejects.resource IS 'The resource.';
COMMENT ON COLUMN rejects.page_offset IS 'The offset of the page it came on.';
COMMENT ON COLUMN rejects.request_id IS 'The page''s request id.';
COMMENT ON COLUMN rejects.reason IS 'Why it was refused.';
COMMENT ON COLUMN rejects.raw IS 'The record as sent.';

-- resource_scans
COMMENT ON TABLE resource_scans IS 'Per run and resource: how the listing went and what it found.';
COMMENT ON COLUMN resource_scans.run_id IS 'The run.';
COMMENT ON COLUMN resource_scans.resource IS 'payments | refunds | disputes | subscriptions | invoices | payment_intents | payment_methods.';
COMMENT ON COLUMN resource_scans.status IS 'complete | incomplete | unavailable | skipped.';
COMMENT ON COLUMN resource_scans.reason IS 'Why not complete.';
COMMENT ON COLUMN resource_scans.pages IS 'Pages fetched.';
COMMENT ON COLUMN resource_scans.records IS 'Distinct ids landed.';
COMMENT ON COLUMN resource_scans.duplicates IS 'Ids seen again while paging (dropped).';
COMMENT ON COLUMN resource_scans.failed_pages IS 'Pages that failed for good.';
COMMENT ON COLUMN resource_scans.rejects IS 'Records that could not be loaded (see rejects).';
COMMENT ON COLUMN resource_scans.new_records IS 'Ids never seen before.';
COMMENT ON COLUMN resource_scans.changed_records IS 'Records whose content changed.';
COMMENT ON COLUMN resource_scans.gone_records IS 'Ids no longer listed (only after a complete scan).';

-- run_retries
COMMENT ON TABLE run_retries IS 'Each recon nightly --retry-failed of a run: when, what it fetched again, what still fails.';
COMMENT ON COLUMN run_retries.run_id IS 'The run the retry finished (or tried to).';
COMMENT ON COLUMN run_retries.retry_id IS 'The retry, unique within its run.';
COMMENT ON COLUMN run_retries.started_at IS 'When the retry started.';
COMMENT ON COLUMN run_retries.pages_fetched IS 'Pages the retry fetched again.';
COMMENT ON COLUMN run_retries.still_failing IS 'Pages that still failed after it.';
COMMENT ON COLUMN run_retries.request_ids IS 'The request ids of the pages it fetched again.';

-- runs
COMMENT ON TABLE runs IS 'One row per nightly run: when, how it ended, why.';
COMMENT ON COLUMN runs.run_id IS 'The run''s id: its start time (UTC) and a random suffix, e.g. 20261121T020000Z-ab12cd.';
COMMENT ON COLUMN runs.started_at IS 'When the run started (UTC).';
COMMENT ON COLUMN runs.finished_at IS 'When it finished (NULL while running or when killed).';
COMMENT ON COLUMN runs.status IS 'running | complete | incomplete | failed.';
COMMENT ON COLUMN runs.reason IS 'One line when failed or incomplete.';
COMMENT ON COLUMN runs.base_url IS 'The API base address, redacted.';
COMMENT ON COLUMN runs.trigger IS 'cli | schedule | sandbox | resume.';
COMMENT ON COLUMN runs.loaded_at IS 'When its data was loaded into the warehouse.';

-- schema_migrations
COMMENT ON TABLE schema_migrations IS 'The numbered migrations (sql/migrations) this warehouse has taken.';
COMMENT ON COLUMN schema_migrations.version IS 'The migration''s number.';
COMMENT ON COLUMN schema_migrations.name IS 'Its file name.';
COMMENT ON COLUMN schema_migrations.applied_at IS 'When it was applied.';

-- reader_objects
COMMENT ON TABLE reader_objects IS 'The fingerprint of the objects the last publish made for readers (reference tables, macros, views, these words) and of the catalog they stand on: the checks that find it unchanged make none of them again.';
COMMENT ON COLUMN reader_objects.fingerprint IS 'sha256 (hex) of the statements that made the objects and of the catalog they left.';
COMMENT ON COLUMN reader_objects.made_at IS 'When the objects were last made.';

-- status_transitions
COMMENT ON TABLE status_transitions IS 'The status changes recon expects per resource (others are suspicious_changes).';
COMMENT ON COLUMN status_transitions.entity IS 'The resource.';
COMMENT ON COLUMN status_transitions.from_status IS 'Status before.';
COMMENT ON COLUMN status_transitions.to_status IS 'Status after.';

-- status_values
COMMENT ON TABLE status_values IS 'The statuses recon knows per resource, and which are final.';
COMMENT ON COLUMN status_values.entity IS 'The resource.';
COMMENT ON COLUMN status_values.status IS 'A status.';
COMMENT ON COLUMN status_values.is_final IS 'True when a record in it does not change any more.';

-- macros analysts call (the ledger_* and recon_* ones are recon's own helpers)
COMMENT ON MACRO money IS 'money(amount_minor, currency): the exact amount in major units, DECIMAL(38,4), scaled by the ISO 4217 exponent; NULL without a minor unit. money(1234, ''EUR'') = 12.3400.';
COMMENT ON MACRO recon_money IS 'recon_money(amount_minor, currency): the amount as text with its code and the currency''s own decimals, e.g. ''EUR 12.34'', ''JPY 123,456''.';
COMMENT ON MACRO recon_minor_text IS 'recon_minor_text(amount_minor, exponent): minor units as text in major units with thousands separators (recon_money''s helper).';
COMMENT ON MACRO aging_bucket IS 'aging_bucket(days_overdue): not yet due | 0-30 | 31-60 | 61-90 | 90+ (NULL for NULL).';
COMMENT ON MACRO TABLE open_invoices_as_of IS 'open_invoices_as_of(as_of): every live open invoice as of a moment, with days_overdue and aging_bucket (the open_invoices view at the latest run).';
COMMENT ON MACRO TABLE counted_refunds IS 'counted_refunds(failed_statuses, as_of, grace_hours): per live payment the refunds that count (not a failure status, same currency): total, in_flight, young, settled, assumed. E.g. counted_refunds([''failed'',''canceled'',''cancelled'',''rejected'',''reversed''], now(), 48).';
COMMENT ON MACRO recon_assumed IS 'recon_assumed(assumed, assumed_count, currency): the words a refund check adds when it counted refunds of unknown status.';
COMMENT ON MACRO ledger_amount_decimals IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';
COMMENT ON MACRO ledger_amount_minor IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';
COMMENT ON MACRO ledger_amount_ok IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';
COMMENT ON MACRO ledger_amount_mark_problem IS 'recon''s books conversion helper (sql/ledger/macros.sql): why an amount with a ''.'' in decimal-comma books is refused.';
COMMENT ON MACRO ledger_amount_problem IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';
COMMENT ON MACRO ledger_amount_text IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';
COMMENT ON MACRO ledger_currency_problem IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';
COMMENT ON MACRO ledger_status IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';
COMMENT ON MACRO ledger_status_problem IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';
COMMENT ON MACRO ledger_time_problem IS 'recon''s books conversion helper (sql/ledger/macros.sql): exact amounts, currencies, statuses and times of the books'' rows.';

-- ledger_links
COMMENT ON TABLE ledger_links IS 'Every link the matching rules made between a books order and a payment, with the rule that made it (sql/matching/).';
COMMENT ON COLUMN ledger_links.order_key IS 'The order: its reference, else its order_id.';
COMMENT ON COLUMN ledger_links.payment_id IS 'The payment.';
COMMENT ON COLUMN ledger_links.rule IS 'manual | exact_reference | normalised_reference | amount_tolerance | payment_reference.';
COMMENT ON COLUMN ledger_links.priority IS 'The rule''s priority (lower first).';
COMMENT ON COLUMN ledger_links.run_id IS 'The run that matched.';

-- ledger_manual_matches
COMMENT ON TABLE ledger_manual_matches IS 'The people''s matches (recon match) as the audit trail holds them, and whether each held tonight.';
COMMENT ON COLUMN ledger_manual_matches.order_key IS 'The order: its reference, else its order_id.';
COMMENT ON COLUMN ledger_manual_matches.payment_ids IS 'The payments it was matched with.';
COMMENT ON COLUMN ledger_manual_matches.who IS 'Who matched (the OS user).';
COMMENT ON COLUMN ledger_manual_matches.matched_at IS 'When.';
COMMENT ON COLUMN ledger_manual_matches.note IS 'Why (the --note).';
COMMENT ON COLUMN ledger_manual_matches.state IS 'applied | lapsed (a side disappeared or changed its amount).';
COMMENT ON COLUMN ledger_manual_matches.reason IS 'Why it lapsed.';
COMMENT ON COLUMN ledger_manual_matches.run_id IS 'The run.';

-- ledger_suggestions
COMMENT ON TABLE ledger_suggestions IS 'Proposed matches for what no rule matched: an order''s best candidates (same currency, amount within tolerance, dates within the window).';
COMMENT ON COLUMN ledger_suggestions.order_key IS 'The order: its reference, else its order_id.';
COMMENT ON COLUMN ledger_suggestions.payment_id IS 'A best candidate payment.';
COMMENT ON COLUMN ledger_suggestions.score IS '100, -20 when the amounts differ, -10 per day apart.';
COMMENT ON COLUMN ledger_suggestions.reasons IS 'Why, in words.';
COMMENT ON COLUMN ledger_suggestions.candidates IS 'Candidates at this score for the order: more than one is ambiguous.';
COMMENT ON COLUMN ledger_suggestions.rivals IS 'Orders this payment is a best candidate of: more than one is ambiguous.';
COMMENT ON COLUMN ledger_suggestions.run_id IS 'The run.';

-- bank_days
COMMENT ON TABLE bank_days IS 'The bank leg''s calendar (docs/bank.md): every day around the payments and statements, weekends and the holidays of [bank] calendar not business days.';
COMMENT ON COLUMN bank_days.day IS 'The calendar day.';
COMMENT ON COLUMN bank_days.business IS 'True on a business day (Monday to Friday, not a holiday of [bank] calendar).';
COMMENT ON COLUMN bank_days.business_day IS 'The business day the day''s payments and refunds belong to: the day itself, or the next business day.';
COMMENT ON COLUMN bank_days.bday_no IS 'Business days counted up to and including this day ("n business days later" is an equality).';
COMMENT ON COLUMN bank_days.holiday IS 'The holiday''s name, when [bank] calendar has one on this day.';

-- bank_gaps
COMMENT ON TABLE bank_gaps IS 'Where the statements'' balances do not chain (check bank_statement_gap): settlements due in the span are not evaluated.';
COMMENT ON COLUMN bank_gaps.currency IS 'The account''s currency.';
COMMENT ON COLUMN bank_gaps.bank_account IS 'The account (IBAN or number) as the statement gives it.';
COMMENT ON COLUMN bank_gaps.first_missing IS 'The first business day with no statement, else the day of the statement that does not chain (the finding''s <CUR>:<date>).';
COMMENT ON COLUMN bank_gaps.span_from IS 'First day not evaluated (the day after the previous statement).';
COMMENT ON COLUMN bank_gaps.span_to IS 'Last day not evaluated (the day of the statement that does not chain).';
COMMENT ON COLUMN bank_gaps.previous_file IS 'The file of the statement before the gap.';
COMMENT ON COLUMN bank_gaps.previous_date IS 'The day of the statement before the gap.';
COMMENT ON COLUMN bank_gaps.previous_closing_minor IS 'Its closing balance, minor units.';
COMMENT ON COLUMN bank_gaps.file_name IS 'The file of the statement after the gap.';
COMMENT ON COLUMN bank_gaps.statement_date IS 'The day of the statement after the gap.';
COMMENT ON COLUMN bank_gaps.opening_minor IS 'Its opening balance, minor units.';
COMMENT ON COLUMN bank_gaps.difference_minor IS 'Opening minus previous closing (or, for lines_do_not_add_up, closing minus opening minus the lines), minor units.';
COMMENT ON COLUMN bank_gaps.missing_days IS 'The business days with no statement in between.';
COMMENT ON COLUMN bank_gaps.kind IS 'missing_day | balance_break | lines_do_not_add_up.';

-- bank_lines
COMMENT ON TABLE bank_lines IS 'Every line of the bank statements RECON_BANK_STATEMENTS names, as read last night (a snapshot); the provider''s credits marked and matched.';
COMMENT ON COLUMN bank_lines.file_name IS 'The statement file''s name (findings name a line <file name>:<line_no>).';
COMMENT ON COLUMN bank_lines.line_no IS 'The line in the file (MT940 :61:, BAI2 16 record, CSV row; header = 1), or the entry''s ordinal in a CAMT.053 file.';
COMMENT ON COLUMN bank_lines.source_file IS 'The file''s path as read.';
COMMENT ON COLUMN bank_lines.format IS 'camt053 | mt940 | bai2 | csv (recognised from the content).';
COMMENT ON COLUMN bank_lines.bank_account IS 'The account (IBAN or number) of its statement.';
COMMENT ON COLUMN bank_lines.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN bank_lines.statement_date IS 'The day of its statement (closing balance''s date); NULL in a CSV.';
COMMENT ON COLUMN bank_lines.booking_date IS 'When the bank booked it.';
COMMENT ON COLUMN bank_lines.value_date IS 'When the money counts (what settlements are matched on).';
COMMENT ON COLUMN bank_lines.amount_minor IS 'Signed amount, minor units: credits positive, debits negative.';
COMMENT ON COLUMN bank_lines.counterparty IS 'The other party (debtor of a credit, creditor of a debit), when the format names it.';
COMMENT ON COLUMN bank_lines.remittance IS 'Remittance and purpose text.';
COMMENT ON COLUMN bank_lines.reference IS 'The bank''s reference of the line.';
COMMENT ON COLUMN bank_lines.is_provider IS 'True when RECON_BANK_PROVIDER_MATCH matches counterparty + remittance (any case).';
COMMENT ON COLUMN bank_lines.settlement_id IS 'The settlement (<CUR>:<YYYY-MM-DD>) this credit was matched to.';
COMMENT ON COLUMN bank_lines.match_state IS 'A provider credit: received | mismatch | candidate (of an ambiguous settlement) | unexpected.';
COMMENT ON COLUMN bank_lines.run_id IS 'The run that read it.';

-- bank_loads
COMMENT ON TABLE bank_loads IS 'What each run read from the bank statements.';
COMMENT ON COLUMN bank_loads.run_id IS 'The run.';
COMMENT ON COLUMN bank_loads.source IS 'RECON_BANK_STATEMENTS that night.';
COMMENT ON COLUMN bank_loads.files IS 'Files read.';
COMMENT ON COLUMN bank_loads.statements IS 'Statements kept.';
COMMENT ON COLUMN bank_loads.lines IS 'Lines kept.';
COMMENT ON COLUMN bank_loads.provider_lines IS 'Lines RECON_BANK_PROVIDER_MATCH says are the provider''s.';
COMMENT ON COLUMN bank_loads.duplicates IS 'Statements read twice (in two files) and kept once.';
COMMENT ON COLUMN bank_loads.first_date IS 'The first day the statements cover.';
COMMENT ON COLUMN bank_loads.last_date IS 'The last day they cover (settlements due later are in transit).';
COMMENT ON COLUMN bank_loads.calendar IS '[bank] calendar that night (holidays of this country).';
COMMENT ON COLUMN bank_loads.loaded_at IS 'When they were read.';

-- bank_settlements
COMMENT ON TABLE bank_settlements IS 'Every expected settlement (per currency and business day) and what the statements show of it (docs/bank.md).';
COMMENT ON COLUMN bank_settlements.settlement_id IS '<CUR>:<YYYY-MM-DD>: the currency and the payments'' business day (the findings'' entity_id).';
COMMENT ON COLUMN bank_settlements.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN bank_settlements.business_day IS 'The business day of the payments and refunds (UTC; a weekend or holiday counts as the next business day).';
COMMENT ON COLUMN bank_settlements.payments IS 'Settled payments (status in [bank] settled_statuses) created that business day.';
COMMENT ON COLUMN bank_settlements.gross_minor IS 'Their amounts, minor units.';
COMMENT ON COLUMN bank_settlements.refunds IS 'Counted refunds (not failed) created that business day in this currency.';
COMMENT ON COLUMN bank_settlements.refunds_minor IS 'Their amounts, minor units.';
COMMENT ON COLUMN bank_settlements.fees_minor IS 'Fees: per payment round-half-even(amount x fee_bps / 10,000) + fee_fixed_minor; NULL when [bank] fees = "unknown".';
COMMENT ON COLUMN bank_settlements.net_minor IS 'Expected credit: gross - refunds - fees, minor units.';
COMMENT ON COLUMN bank_settlements.tolerance_minor IS 'How far a credit may be from net_minor and still match, minor units.';
COMMENT ON COLUMN bank_settlements.pay_date IS 'When it is due: [bank] settlement_days business days after business_day.';
COMMENT ON COLUMN bank_settlements.deadline IS 'The last day it may arrive before it is missing: pay_date + [bank] grace_days business days.';
COMMENT ON COLUMN bank_settlements.state IS 'received | mismatch | ambiguous | missing | in_transit | not_evaluated (a gap) | not_covered (no statement) | nothing_due.';
COMMENT ON COLUMN bank_settlements.reason IS 'Why it is in transit, not covered or nothing is due, in words.';
COMMENT ON COLUMN bank_settlements.credit IS 'The credit found: <file name>:<line>.';
COMMENT ON COLUMN bank_settlements.value_date IS 'The credit''s value date.';
COMMENT ON COLUMN bank_settlements.received_minor IS 'The credit''s amount, minor units.';
COMMENT ON COLUMN bank_settlements.difference_minor IS 'Received - expected, minor units.';
COMMENT ON COLUMN bank_settlements.candidates IS 'Ambiguous: every credit that could be it (none picked).';
COMMENT ON COLUMN bank_settlements.run_id IS 'The run that reconciled it.';

-- bank_statements
COMMENT ON TABLE bank_statements IS 'Every bank statement read last night (a snapshot): one account''s day, or one currency of a CSV file.';
COMMENT ON COLUMN bank_statements.file_name IS 'The file''s name.';
COMMENT ON COLUMN bank_statements.source_file IS 'The file''s path as read.';
COMMENT ON COLUMN bank_statements.format IS 'camt053 | mt940 | bai2 | csv.';
COMMENT ON COLUMN bank_statements.statement_no IS 'Where it starts in the file: line (MT940, BAI2, CSV) or statement ordinal (CAMT.053).';
COMMENT ON COLUMN bank_statements.bank_account IS 'The account (IBAN or number).';
COMMENT ON COLUMN bank_statements.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN bank_statements.statement_date IS 'The closing balance''s date (CAMT CLBD, MT940 :62F:, BAI2 as-of date); NULL for a CSV.';
COMMENT ON COLUMN bank_statements.first_date IS 'The first day it covers.';
COMMENT ON COLUMN bank_statements.last_date IS 'The last day it covers.';
COMMENT ON COLUMN bank_statements.opening_minor IS 'Opening balance, minor units (NULL: none given).';
COMMENT ON COLUMN bank_statements.closing_minor IS 'Closing balance, minor units (NULL: none given).';
COMMENT ON COLUMN bank_statements.line_count IS 'Its lines.';
COMMENT ON COLUMN bank_statements.lines_minor IS 'The sum of its lines, minor units.';
COMMENT ON COLUMN bank_statements.run_id IS 'The run that read it.';
