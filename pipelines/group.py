"""The nightly flow over several accounts: one task per account, side by side.

Each task runs that account's whole night (`recon.accounts.run_account`: today's steps, its
own client, limiter and warehouse); on the default thread runner each task runs it in a
process of its own when there are several accounts and cores (`recon.accounts.processes`),
on a Dask task runner they spread over the workers. Then the night as a whole
(`recon.accounts.finish_group`): consolidated warehouse, group page, one alert. Parameters
carry only the accounts' names and non-secret paths; every key is read from the
environment inside the task.
"""

from __future__ import annotations

from typing import Any

from prefect import State, flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from pipelines.lines import one_line_for_recon_errors
from pipelines.states import night_state
from recon.accounts import night as group

one_line_for_recon_errors()  # also in a deployed run's own process

Overrides = dict[str, Any] | None


@task(name="account-night", cache_policy=NO_CACHE, persist_result=False)
def account_night(
    overrides: Overrides,
    account: str,
    resume: bool,
    retry_failed: bool,
    trigger: str,
    fail_on: str | None,
    payment_methods: bool,
    apart: bool = False,
) -> group.AccountOutcome:
    outcome = group.run_account_where(
        overrides,
        account,
        apart=apart,
        resume=resume,
        retry_failed=retry_failed,
        trigger=trigger,
        fail_on=fail_on,
        payment_methods=payment_methods,
    )
    md = outcome.report_dir / "report.md" if outcome.report_dir else None
    text = (  # the account's report.md names the account in its heading
        md.read_text()
        if md and md.exists()
        else f"# account {account}\n\n{outcome.status}: {outcome.reason or ''}"
    )
    try:  # what the Prefect UI shows of the account; never worth the account's outcome
        create_markdown_artifact(
            key=f"recon-summary-{account.replace('_', '-')}",
            markdown=text,
            description=f"recon account {account}, run {outcome.run_id or '(none)'}",
        )
    except Exception as exc:
        get_run_logger().warning("account %s: no artifact (%s)", account, type(exc).__name__)
    return outcome


@flow(name="recon-group-nightly", log_prints=False, validate_parameters=False)
def group_nightly(
    overrides: Overrides = None,
    accounts: list[str] | None = None,
    night_id: str | None = None,
    resume: bool = False,
    trigger: str = "cli",
    fail_on: str | None = None,
    payment_methods: bool = False,
    retry_failed: bool = False,
) -> State[group.GroupSummary]:
    """Reconcile every configured account side by side, then the group page and warehouse.
    The final state says what the night was, its worst account's (`pipelines.states`).

    `accounts` and `night_id` default to every configured account (checked before any
    request) and a new id: what a scheduled run passes.
    """
    if accounts is None:
        accounts = group.group_preflight(overrides)
    if night_id is None:
        from recon.runid import new_run_id

        night_id = new_run_id()
    from recon.accounts.processes import worth_processes

    apart = worth_processes(len(accounts))  # on a Dask worker each runs there instead
    futures = [
        account_night.with_options(task_run_name=f"account-{name}").submit(
            overrides, name, resume, retry_failed, trigger, fail_on, payment_methods, apart
        )
        for name in accounts
    ]
    outcomes = [f.result() for f in futures]
    summary = group.finish_group(overrides, night_id, outcomes)
    logger = get_run_logger()
    for o in summary.outcomes:
        logger.info("account %s: %s (exit %s)", o.account, o.status, o.exit_code)
    lines = [f"# recon night {summary.night_id}: {summary.status} (exit {summary.exit_code})", ""]
    lines += ["| account | status | exit | run | reason |", "|---|---|---|---|---|"]
    lines += [
        f"| {o.account} | {o.status} | {o.exit_code} | {o.run_id or ''} | {o.reason or ''} |"
        for o in summary.outcomes
    ]
    create_markdown_artifact(
        key="recon-group", markdown="\n".join(lines), description=f"recon night {night_id}"
    )
    return night_state(summary, label=f"night {summary.night_id}")
