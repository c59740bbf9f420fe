"""Check files: read the `--` YAML header (recon.warehouse.sql.read_header, as the matching rules'
headers are read) and validate the one SELECT below it.

A check file (`sql/checks/<name>.sql`)::

    -- name: refunded_amount_mismatch            (must equal the file stem)
    -- description: One line that says what a finding means.
    -- severity: error                          (error | warn | info)
    -- requires: [payments, refunds]            (resources that must be complete this run)
    -- tags: [refunds]
    -- tolerates: [payments]                    (optional: these may be incomplete; the
    --                                              verdict then covers the records read)
    -- per_resource: [payments, refunds]        (optional: evaluated per resource covered;
    --                                              or `every resource [with <trait>]`: the
    --                                              catalogue's, recon.catalogue.resources.TRAITS)
    -- requires_fields: [disputes.payment_id]   (optional: mapped fields it cannot do without;
    --                                              `*.status`: of each resource it reads
    --                                              that maps one)
    -- finding_key: [entity_id]                 (optional: default [entity_id, issue_type])
    -- evaluable_when: SELECT count(*) > 0 FROM …   (optional: a boolean SELECT)
    -- not_evaluated_reason: why, when it is false  (optional)
    SELECT … AS entity, … AS entity_id, … AS currency, … AS amount_minor,
           … AS issue_type, … AS detail
    FROM …

Parsing never touches the caller's transaction: `extract_statements` only parses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from recon.catalogue.resources import CATALOGUE, TRAITS, resources_with
from recon.config.settings import DEFAULT_FIELDS
from recon.errors import CheckDefinitionError
from recon.warehouse.sql import HeaderError, read_header

__all__ = [
    "KNOWN_PARAMETERS",
    "OUTPUT_COLUMNS",
    "RESOURCES",
    "SEVERITIES",
    "CheckDefinition",
    "parse_check",
    "parse_check_text",
    "render_description",
    "used_parameters",
]

SEVERITIES = ("error", "warn", "info")
RESOURCES = tuple(CATALOGUE)  # what a check may require: the catalogue's names
KNOWN_PARAMETERS = frozenset(
    {"run_id", "as_of", "stuck_days", "volume_ratio", "failed_statuses", "refund_grace_hours"}
)
OUTPUT_COLUMNS = ("entity", "entity_id", "currency", "amount_minor", "issue_type", "detail")

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_REQUIRED_KEYS = frozenset({"name", "description", "severity", "requires"})
_OPTIONAL_KEYS = frozenset(
    {
        "tags",
        "tolerates",
        "per_resource",
        "requires_fields",
        "finding_key",
        "evaluable_when",
        "not_evaluated_reason",
    }
)
_FINDING_KEYS = (("entity_id", "issue_type"), ("entity_id",))
# String literals and comments are skipped, so '$.amountMinor' (a JSON path) and a `$x` in a
# comment are not parameters.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|\$([A-Za-z_][A-Za-z0-9_]*)")


_DESCRIPTION_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class CheckDefinition:
    """One parsed, validated check file."""

    name: str
    description: str
    severity: str
    requires: tuple[str, ...]
    tags: tuple[str, ...]
    sql: str
    parameters: frozenset[str]
    path: Path | None = None
    per_resource: tuple[str, ...] = ()
    evaluable_when: str | None = None
    evaluable_parameters: frozenset[str] = frozenset()
    not_evaluated_reason: str | None = None
    tolerates: tuple[str, ...] = ()
    requires_fields: tuple[tuple[str, str], ...] = ()  # (resource, field of DEFAULT_FIELDS)
    finding_key: tuple[str, ...] = ("entity_id", "issue_type")

    @property
    def resources(self) -> tuple[str, ...]:
        """Every resource the check reads: `requires`, then `per_resource`."""
        return self.requires + tuple(r for r in self.per_resource if r not in self.requires)

    @property
    def key_has_issue_type(self) -> bool:
        """Whether `issue_type` is part of a finding's identity (`finding_key`)."""
        return "issue_type" in self.finding_key


def render_description(description: str, values: Mapping[str, Any]) -> str:
    """`description` with each `$name` replaced by its value for people (`$stuck_days` -> 7;
    a list joined with commas); a name without a value is left as written."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            return match.group(0)
        given = values[name]
        if isinstance(given, (list, tuple, set, frozenset)):
            return ", ".join(str(v) for v in given)
        if isinstance(given, float):
            return f"{given:g}"
        return str(given)

    return _DESCRIPTION_PARAMETER.sub(value, description)


def used_parameters(sql: str) -> frozenset[str]:
    """The `$name` parameters that `sql` uses, outside string literals and comments."""
    return frozenset(m.group(1) for m in _TOKENS.finditer(sql) if m.group(1))


def parse_check(path: Path) -> CheckDefinition:
    """Read and validate one check file; any problem is a `CheckDefinitionError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckDefinitionError(f"{path.name}: cannot be read: {exc}") from exc
    return parse_check_text(text, name=path.stem, path=path)


def parse_check_text(text: str, *, name: str, path: Path | None = None) -> CheckDefinition:
    """Validate the text of a check named `name` (the file stem)."""
    where = path.name if path is not None else name
    try:
        header, body = read_header(text)
    except HeaderError as exc:
        raise CheckDefinitionError(f"{where}: {exc}") from exc
    _check_keys(header, where)
    if header.get("name") != name:
        raise CheckDefinitionError(
            f"{where}: header name {header.get('name')!r} must equal the file stem {name!r}"
        )
    if not _NAME.match(name):
        raise CheckDefinitionError(f"{where}: name must be lower_snake_case (a-z, 0-9, _)")
    description = header["description"]
    if not isinstance(description, str) or not description.strip():
        raise CheckDefinitionError(f"{where}: description must be a non-empty string")
    severity = header["severity"]
    if severity not in SEVERITIES:
        raise CheckDefinitionError(
            f"{where}: severity must be one of {', '.join(SEVERITIES)}, not {severity!r}"
        )
    requires = _resource_list(header, "requires", where)
    per_resource = _resource_list(header, "per_resource", where)
    tolerates = _resource_list(header, "tolerates", where)
    stray = [r for r in tolerates if r not in requires and r not in per_resource]
    if stray:
        raise CheckDefinitionError(
            f"{where}: tolerates names {', '.join(stray)}, which requires/per_resource do not"
        )
    requires_fields = _field_list(header, requires + per_resource, where)
    finding_key = header.get("finding_key") or ["entity_id", "issue_type"]
    if not isinstance(finding_key, list) or tuple(finding_key) not in _FINDING_KEYS:
        raise CheckDefinitionError(
            f"{where}: finding_key must be [entity_id, issue_type] or [entity_id]"
        )
    tags = header.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise CheckDefinitionError(f"{where}: tags must be a list of strings")
    evaluable_when = header.get("evaluable_when")
    if evaluable_when is not None:
        if not isinstance(evaluable_when, str):
            raise CheckDefinitionError(f"{where}: evaluable_when must be a SELECT (a string)")
        _validate_select(evaluable_when, f"{where} (evaluable_when)")
    reason = header.get("not_evaluated_reason")
    if reason is not None and not isinstance(reason, str):
        raise CheckDefinitionError(f"{where}: not_evaluated_reason must be a string")
    _validate_select(body, where)
    parameters = used_parameters(body)
    evaluable_parameters = used_parameters(evaluable_when) if evaluable_when else frozenset()
    unknown = (parameters | evaluable_parameters) - KNOWN_PARAMETERS
    if unknown:
        raise CheckDefinitionError(
            f"{where}: unknown parameter(s) {', '.join('$' + u for u in sorted(unknown))}; "
            f"known: {', '.join('$' + k for k in sorted(KNOWN_PARAMETERS))}"
        )
    return CheckDefinition(
        name=name,
        description=" ".join(description.split()),
        severity=severity,
        requires=requires,
        tags=tuple(tags),
        sql=body,
        parameters=parameters,
        path=path,
        per_resource=per_resource,
        evaluable_when=evaluable_when,
        evaluable_parameters=evaluable_parameters,
        not_evaluated_reason=reason,
        tolerates=tolerates,
        requires_fields=requires_fields,
        finding_key=tuple(finding_key),
    )


def _check_keys(header: dict[str, Any], where: str) -> None:
    missing = _REQUIRED_KEYS - header.keys()
    if missing:
        raise CheckDefinitionError(f"{where}: header lacks {', '.join(sorted(missing))}")
    extra = header.keys() - _REQUIRED_KEYS - _OPTIONAL_KEYS
    if extra:
        raise CheckDefinitionError(f"{where}: unknown header key(s) {', '.join(sorted(extra))}")


def _resource_list(header: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = header.get(key) or []
    if isinstance(value, str):
        return _every_resource(value, key, where)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CheckDefinitionError(f"{where}: {key} must be a list of resource names")
    unknown = [v for v in value if v not in RESOURCES]
    if unknown:
        raise CheckDefinitionError(
            f"{where}: {key} names unknown resource(s) {', '.join(unknown)}; "
            f"known: {', '.join(RESOURCES)}"
        )
    return tuple(value)


def _every_resource(value: str, key: str, where: str) -> tuple[str, ...]:
    """`every resource` / `every resource with <trait>`: the catalogue's record resources
    (with that trait), so a resource added to the catalogue is covered without an edit here."""
    words = value.split()
    if words[:2] == ["every", "resource"] and len(words) in (2, 4):
        if len(words) == 2:
            return resources_with()
        if words[2] == "with" and words[3] in TRAITS:
            return resources_with(words[3])
    raise CheckDefinitionError(
        f"{where}: {key} must be a list of resource names, `every resource` or "
        f"`every resource with <trait>` (traits: {', '.join(TRAITS)}), not {value!r}"
    )


def _field_list(
    header: dict[str, Any], resources: tuple[str, ...], where: str
) -> tuple[tuple[str, str], ...]:
    value = header.get("requires_fields") or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CheckDefinitionError(f"{where}: requires_fields must be a list of resource.field")
    out = []
    for item in value:
        resource, _, field = item.partition(".")
        if resource == "*":  # `*.status`: each resource read that maps the field
            out += [(r, field) for r in resources if field in DEFAULT_FIELDS.get(r, {})]
            if not any(field in DEFAULT_FIELDS.get(r, {}) for r in RESOURCES):
                raise CheckDefinitionError(f"{where}: {item!r}: no resource maps {field!r}")
            continue
        if resource not in resources:
            raise CheckDefinitionError(
                f"{where}: requires_fields names {item!r}, but the check does not read {resource}"
            )
        if field not in DEFAULT_FIELDS.get(resource, {}):
            known = ", ".join(DEFAULT_FIELDS.get(resource, {})) or "none"
            raise CheckDefinitionError(
                f"{where}: {item!r} is not a mapped field (mapped {resource} fields: {known})"
            )
        out.append((resource, field))
    return tuple(out)


def _validate_select(sql: str, where: str) -> None:
    if not sql:
        raise CheckDefinitionError(f"{where}: no SELECT after the header")
    if sql.rstrip().endswith(";"):
        raise CheckDefinitionError(f"{where}: the SELECT must not end with ';'")
    # Parsing only (no binding, no execution): safe inside any transaction.
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise CheckDefinitionError(f"{where}: SQL does not parse: {_first_line(exc)}") from exc
    if len(statements) != 1:
        raise CheckDefinitionError(
            f"{where}: must hold exactly one statement, not {len(statements)}"
        )
    if statements[0].type != duckdb.StatementType.SELECT:
        raise CheckDefinitionError(f"{where}: the statement must be a SELECT")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
