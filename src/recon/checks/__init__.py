"""The reconciliation checks: `sql/checks/*.sql` files, their runner and the findings lifecycle.

    run_checks(con, run_id=…, as_of=…, params=CheckParams(…)) -> list[CheckRun]

See `docs/checks.md` for the catalogue and how to add a check.
"""

from recon.checks.definition import (
    KNOWN_PARAMETERS,
    OUTPUT_COLUMNS,
    SEVERITIES,
    CheckDefinition,
    parse_check,
    parse_check_text,
)
from recon.checks.lifecycle import CheckRun
from recon.checks.runner import (
    CheckParams,
    default_checks_dir,
    default_sql_dir,
    ensure_reference_tables,
    load_checks,
    run_checks,
)

__all__ = [
    "KNOWN_PARAMETERS",
    "OUTPUT_COLUMNS",
    "SEVERITIES",
    "CheckDefinition",
    "CheckParams",
    "CheckRun",
    "default_checks_dir",
    "default_sql_dir",
    "ensure_reference_tables",
    "load_checks",
    "parse_check",
    "parse_check_text",
    "run_checks",
]
