-- Migration 0400: content hashes of the canonical text (issue 24). The load hashed each
-- record's text as landed, md5(raw); it now hashes md5(json(raw)) (sql/load/stage.sql): the
-- text without white space, its escapes and numbers written one way, because a list page's
-- records now land as the provider sent them rather than as recon wrote them back. A record
-- whose stored text is canonical already (what recon wrote: nearly every one) keeps its
-- hash; the others take the canonical one here, the latest version in record_versions with
-- them, so that no record looks changed on the first night after the upgrade.
-- Only the records whose hash changes are kept (none, usually).
CREATE OR REPLACE TEMP TABLE recanonical AS
SELECT * FROM (
SELECT 'payments' AS entity, id, content_hash AS was, md5(json(raw)) AS now FROM payments
UNION ALL
SELECT 'refunds' AS entity, id, content_hash AS was, md5(json(raw)) AS now FROM refunds
UNION ALL
SELECT 'disputes' AS entity, id, content_hash AS was, md5(json(raw)) AS now FROM disputes
UNION ALL
SELECT 'subscriptions' AS entity, id, content_hash AS was, md5(json(raw)) AS now FROM subscriptions
UNION ALL
SELECT 'invoices' AS entity, id, content_hash AS was, md5(json(raw)) AS now FROM invoices
UNION ALL
SELECT 'payment_intents' AS entity, id, content_hash AS was, md5(json(raw)) AS now FROM payment_intents
UNION ALL
SELECT 'payment_methods' AS entity, id, content_hash AS was, md5(json(raw)) AS now FROM payment_methods
)
WHERE was <> now;

-- The latest version keeps no raw (its text is the current row's) and the current row's hash.
UPDATE record_versions SET content_hash = r.now
FROM recanonical r
WHERE record_versions.entity = r.entity AND record_versions.id = r.id
  AND record_versions.raw IS NULL AND record_versions.content_hash = r.was;

-- Earlier versions keep their own text.
UPDATE record_versions SET content_hash = md5(json(raw))
WHERE raw IS NOT NULL AND content_hash <> md5(json(raw));

UPDATE payments SET content_hash = r.now
FROM recanonical r
WHERE r.entity = 'payments' AND payments.id = r.id;

UPDATE refunds SET content_hash = r.now
FROM recanonical r
WHERE r.entity = 'refunds' AND refunds.id = r.id;

UPDATE disputes SET content_hash = r.now
FROM recanonical r
WHERE r.entity = 'disputes' AND disputes.id = r.id;

UPDATE subscriptions SET content_hash = r.now
FROM recanonical r
WHERE r.entity = 'subscriptions' AND subscriptions.id = r.id;

UPDATE invoices SET content_hash = r.now
FROM recanonical r
WHERE r.entity = 'invoices' AND invoices.id = r.id;

UPDATE payment_intents SET content_hash = r.now
FROM recanonical r
WHERE r.entity = 'payment_intents' AND payment_intents.id = r.id;

UPDATE payment_methods SET content_hash = r.now
FROM recanonical r
WHERE r.entity = 'payment_methods' AND payment_methods.id = r.id;

DROP TABLE recanonical;
