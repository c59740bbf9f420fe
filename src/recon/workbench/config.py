"""The workbench's own settings, read from the environment (`RECON_*`) when it starts.

RECON_SLA_DAYS_ERROR / _WARN / _INFO   days from first sighting to a finding's due date
                                       (defaults 2, 5, 30)
RECON_APPROVAL_THRESHOLD_MINOR         a manual resolution of a finding whose amount (its
                                       own minor units, absolute) is above this needs an
                                       approver; unset: only write-offs and matches do
RECON_SESSION_HOURS                    how long a login lasts (default 8)
"""

from __future__ import annotations

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from recon.errors import ConfigError

__all__ = ["WorkbenchSettings", "load_workbench_settings"]


class WorkbenchSettings(BaseSettings):
    """Due dates, the approval threshold and the session length."""

    model_config = SettingsConfigDict(env_prefix="RECON_", extra="ignore")

    sla_days_error: int = Field(2, ge=0, le=3650)
    sla_days_warn: int = Field(5, ge=0, le=3650)
    sla_days_info: int = Field(30, ge=0, le=3650)
    approval_threshold_minor: int | None = Field(None, ge=0)
    session_hours: float = Field(8.0, gt=0, le=24 * 30)


def load_workbench_settings() -> WorkbenchSettings:
    """The settings from the environment; a bad value is a ConfigError naming the variable."""
    try:
        return WorkbenchSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        name = f"RECON_{str(first['loc'][0]).upper()}" if first["loc"] else "settings"
        raise ConfigError(name, str(first["msg"])) from None
