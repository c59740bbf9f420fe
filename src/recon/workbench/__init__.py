"""The workbench (`recon serve`): exceptions worked in a browser, with four eyes.

recon.workbench.users      users, roles and argon2 hashes beside the warehouse
recon.workbench.rules      who may do what: the roles, the four eyes, the CLI's user
recon.workbench.service    the one service layer (pages, API, CLI, worklist import); its parts:
  .base                    the warehouse read-only for a moment, the trail, a proposal written
  .decisions               what an action on a finding comes to: applied, proposed, nothing
  .matching                manual matches and accepted suggestions
  .proposals               the proposals and an approver's decision
  .closing                 the month's close: its figures, sign-off, reopening, pack
recon.workbench.queue      the queue's filters, keyset pages and root causes (sql/workbench/)
recon.workbench.snapshot   the queue's own copy of the latest findings, in queue order
recon.workbench.views      saved views: a user's filter sets, by name
recon.workbench.store      the small JSON files beside the warehouse (users, views)
recon.workbench.sessions   logins, CSRF tokens, the login rate limit
recon.workbench.app        the starlette application; .api the JSON API, .pages the pages,
                           .web what both share (the session and CSRF checks)
recon.workbench.worklist   the Excel worklist, written; .importing applies one
recon.workbench.config     its settings (due dates, approval threshold, session length)
"""
