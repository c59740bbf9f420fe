"""The workbench (`recon serve`): exceptions worked in a browser, with four eyes.

recon.workbench.users     users, roles and argon2 hashes beside the warehouse
recon.workbench.service   the one service layer: roles, four eyes, the audit trail
recon.workbench.queue     the queue's filters and keyset pages (sql/workbench/queue.sql)
recon.workbench.snapshot  the queue's own copy of the latest findings, in queue order
recon.workbench.sessions  logins, CSRF tokens, the login rate limit
recon.workbench.app       the starlette application: JSON API under /api/v1 and the pages
recon.workbench.config    its settings (due dates, approval threshold, session length)
"""
