"""Every third-party module the library and the flows import is declared in pyproject.toml
(not merely installed because another package brings it)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _imported() -> set[str]:
    found: set[str] = set()
    for base in ("src", "pipelines"):
        for path in (REPO / base).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"recon", "pipelines", "__future__"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_package_is_declared() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_norm(re.split(r"[<>=\[ ;!~]", d)[0]) for d in project["dependencies"]}
    distributions = packages_distributions()
    undeclared = {
        module: distributions.get(module, [])
        for module in _imported()
        if not any(_norm(d) in declared for d in distributions.get(module, []))
    }
    assert undeclared == {}
