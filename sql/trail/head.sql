-- The audit trail's head as the warehouse records it: how many lines, and the SHA-256 of the
-- last one (recon findings verify checks the trail against every head written down).
SELECT max(seq) AS lines, arg_max(line_hash, seq) AS head
FROM finding_acks
WHERE line_hash IS NOT NULL
