"""Scripted faults that the parallel-paging and retry tests turn on, and switch at run time.

Each is deterministic (a count of requests, an offset, a record index; never a clock):

- ``storm``: the first N API requests are answered 429 with ``Retry-After``.
- ``cap_after``: from the list request after the N-th on, every list page holds at most
  ``cap_to`` records (a server whose page cap changes mid-scan).
- :class:`Shift`: after the N-th answered request of a list, K records just before offset X
  are deleted and I new ones inserted at the head (records move between two windows of
  requests in flight).
- :class:`Delay`: the pages of a list at one offset take longer (answers out of order).
- :class:`Poison`: every page of a list that holds record N fails with a 500, every time.

Text forms (the CLI's, and ``POST /_sandbox/faults``): ``disputes:17`` (poison),
``payments:after=3,delete=5,before=400,insert=2`` (shift), ``payments:400=250`` (delay, ms).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from recon.catalogue.resources import nightly_resources

__all__ = ["LISTS", "Delay", "FaultSwitches", "Poison", "Shift", "list_resource"]

#: The list resources faults can name (``payment-intents`` is accepted for ``payment_intents``).
LISTS = tuple(r.name for r in nightly_resources())  # the catalogue's nightly lists


def list_resource(name: str) -> str:
    """The list resource ``name`` names, or ValueError."""
    resource = name.strip().lower().replace("-", "_")
    if resource not in LISTS:
        raise ValueError(f"unknown list {name!r}; choose from {', '.join(LISTS)}")
    return resource


def _int(text: str, what: str, *, lo: int = 0) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{what} must be an integer, not {text!r}") from None
    if value < lo:
        raise ValueError(f"{what} must be >= {lo}")
    return value


@dataclass(frozen=True)
class Poison:
    """Record ``index`` of list ``resource``: every page that holds it fails, every time."""

    resource: str
    index: int

    @classmethod
    def parse(cls, text: str) -> Poison:
        """``disputes:17``."""
        name, sep, index = text.partition(":")
        if not sep:
            raise ValueError(f"poison {text!r}: expected LIST:INDEX, e.g. disputes:17")
        return cls(list_resource(name), _int(index, "the poisoned record index"))

    def __str__(self) -> str:
        return f"{self.resource}:{self.index}"


@dataclass(frozen=True)
class Shift:
    """After the ``after``-th answered request of ``resource``: delete ``delete`` records
    just before offset ``before``, insert ``insert`` new ones at the head."""

    resource: str
    after: int
    delete: int = 0
    before: int = 0
    insert: int = 0

    @classmethod
    def parse(cls, text: str) -> Shift:
        """``payments:after=3,delete=5,before=400,insert=2`` (delete, before, insert: 0)."""
        name, sep, rest = text.partition(":")
        if not sep:
            raise ValueError(f"shift {text!r}: expected LIST:after=N,delete=K,before=X,insert=I")
        fields: dict[str, int] = {}
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            key = key.strip()
            if not eq or key not in ("after", "delete", "before", "insert"):
                raise ValueError(f"shift {text!r}: unknown part {part!r}")
            fields[key] = _int(value, f"shift {key}", lo=1 if key == "after" else 0)
        if "after" not in fields:
            raise ValueError(f"shift {text!r}: after=N is required")
        return cls(list_resource(name), **fields)

    def __str__(self) -> str:
        return (
            f"{self.resource}:after={self.after},delete={self.delete},"
            f"before={self.before},insert={self.insert}"
        )


@dataclass(frozen=True)
class Delay:
    """Every page of ``resource`` at ``skip`` takes ``ms`` longer."""

    resource: str
    skip: int
    ms: float

    @classmethod
    def parse(cls, text: str) -> Delay:
        """``payments:400=250``: the page at skip 400 takes 250 ms longer."""
        name, sep, rest = text.partition(":")
        skip, eq, ms = rest.partition("=")
        if not sep or not eq:
            raise ValueError(f"delay {text!r}: expected LIST:SKIP=MS, e.g. payments:400=250")
        try:
            millis = float(ms)
        except ValueError:
            raise ValueError(f"delay {text!r}: MS must be a number") from None
        if millis < 0:
            raise ValueError(f"delay {text!r}: MS must be >= 0")
        return cls(list_resource(name), _int(skip, "the delayed skip"), millis)

    def __str__(self) -> str:
        return f"{self.resource}:{self.skip}={self.ms:g}"


@dataclass
class FaultSwitches:
    """The scripted faults now in force (``enabled`` False: no fault at all, profiles too)."""

    enabled: bool = True
    storm: int = 0
    cap_after: int | None = None
    cap_to: int = 100
    shifts: tuple[Shift, ...] = ()
    delays: tuple[Delay, ...] = ()
    poison: tuple[Poison, ...] = ()
    #: counters: API requests met by the storm so far, list requests so far, and answered
    #: requests per list (what ``cap_after`` and ``Shift.after`` count)
    stormed: int = 0
    list_requests: int = 0
    answered: dict[str, int] = field(default_factory=dict)

    def cap_now(self) -> int | None:
        """The page cap in force now (None: the profile's, if any)."""
        if not self.enabled or self.cap_after is None:
            return None
        return self.cap_to if self.list_requests > self.cap_after else None

    def delay_ms(self, resource: str, skip: int) -> float:
        if not self.enabled:
            return 0.0
        return sum(d.ms for d in self.delays if d.resource == resource and d.skip == skip)

    def poisoned(self, resource: str) -> list[Poison]:
        if not self.enabled:
            return []
        return [p for p in self.poison if p.resource == resource]

    def changed(self, **changes: Any) -> FaultSwitches:
        """A copy with ``changes`` (field names as above; strings are parsed)."""
        parsed = dict(changes)
        for name, kind in (("poison", Poison), ("shifts", Shift), ("delays", Delay)):
            if name in parsed:
                parsed[name] = tuple(
                    kind.parse(v) if isinstance(v, str) else v for v in parsed[name]
                )
        return replace(self, **parsed)

    def as_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "storm": self.storm,
            "stormed": self.stormed,
            "capAfter": self.cap_after,
            "capTo": self.cap_to,
            "capNow": self.cap_now(),
            "listRequests": self.list_requests,
            "shifts": [str(s) for s in self.shifts],
            "delays": [str(d) for d in self.delays],
            "poison": [str(p) for p in self.poison],
            "answered": dict(self.answered),
        }
