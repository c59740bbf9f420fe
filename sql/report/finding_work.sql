-- What the team decided on one batch of the run's findings (recon.report.render), in the
-- batch's order: `batch_keys(i, finding_key)` is the batch, registered from Arrow.
-- work_state, owner, work_note, work_reason, lapsed_reason come from the audit trail (view
-- finding_states; NULL for a finding the checks resolved).
SELECT w.work_state, w.owner, w.work_note, w.work_reason, w.lapsed_reason
FROM batch_keys AS k
LEFT JOIN finding_states AS w ON w.run_id = $run_id AND w.finding_key = k.finding_key
ORDER BY k.i
