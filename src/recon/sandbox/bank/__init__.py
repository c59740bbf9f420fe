"""Bank statements for a sandbox data set (`recon sandbox bank`), with planted missing,
short and unexpected credits and a gap, and the ground truth of the bank checks over them.

    plan = plan_statements(Dataset(7, 1000))     # settlements, days, plants, truth
    write_statements(plan, Path("bank"))          # one file per currency, four formats
"""

from recon.sandbox.bank.plan import (
    FORMAT_OF,
    PROVIDER_MATCH,
    SANDBOX_BANK,
    BankPlan,
    expected_settlements,
    plan_statements,
)
from recon.sandbox.bank.writers import sandbox_bank, write_statements

__all__ = [
    "FORMAT_OF",
    "PROVIDER_MATCH",
    "SANDBOX_BANK",
    "BankPlan",
    "expected_settlements",
    "plan_statements",
    "sandbox_bank",
    "write_statements",
]
