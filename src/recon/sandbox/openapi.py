"""The sandbox's OpenAPI document (``openapi.yaml`` next to this module)."""

from __future__ import annotations

import copy
import functools
from importlib import resources
from typing import Any

import yaml

__all__ = ["openapi_dict", "openapi_text"]


@functools.cache
def openapi_text() -> str:
    """The sandbox's OpenAPI document (YAML text, kept next to this module)."""
    return resources.files("recon.sandbox").joinpath("openapi.yaml").read_text(encoding="utf-8")


def openapi_dict() -> dict[str, Any]:
    """The OpenAPI document as a (fresh) dict."""
    return copy.deepcopy(cached_openapi_dict())


@functools.cache
def cached_openapi_dict() -> dict[str, Any]:
    """The OpenAPI document as a dict, parsed once (do not change it)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded = yaml.load(openapi_text(), Loader=loader)  # noqa: S506 - a safe loader
    assert isinstance(loaded, dict)
    return loaded
