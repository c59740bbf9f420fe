"""Working off exceptions as a team: `recon findings` and the audit trail.

recon.findings.acks          the hash-chained audit trail beside the warehouse (AckLog)
recon.findings.trail_table   the trail's copy in the warehouse (finding_acks)
recon.findings.work          a finding's work state, decided from the trail
recon.findings.verify        `recon findings verify`: the trail's hash chain checked
recon.findings.listing       the latest run's unresolved findings, the filters every action takes
recon.workbench.worklist     the Excel worklist, written (recon.workbench.importing applies it)
recon.findings.selection     what the commands share: options declared once, select-then-confirm
recon.cli.findings           the `recon findings` commands (cli_worklist: export, import)
"""
