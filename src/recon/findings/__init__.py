"""Working off exceptions: `recon findings list|ack|unack` and their audit trail.

recon.findings.acks      the append-only acknowledgement log beside the warehouse
recon.findings.listing   the latest run's unresolved findings with their ack state
recon.findings.cli       the `recon findings` commands
"""
