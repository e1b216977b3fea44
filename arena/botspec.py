"""Bot specifications: ``name`` or ``name[param=value,...]`` naming a configured bot, and the
declared parameters a specification is checked against.

A bot registers its parameters as defaults (``{"iterations": 1000, "c": 0.7}``), optionally with
bounds (``ranges={"iterations": (1, None), "c": (0.0, None)}``) and types where the default's
is not the one meant (``types={"c": float}``). :func:`declare_params` turns that into one
:class:`ParamRule` per parameter; :meth:`BotSpec.resolve` refuses a setting that breaks its rule
before anything is played, naming the bot, the parameter, the value and what is allowed.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from arena.errors import UnknownBotError

_SPEC = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*(?:\[(.*)\])?\s*$")


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def format_value(value: Any) -> str:
    """A parameter value as a spec writes it (``true``/``false`` for booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: The parameter types a bot may declare, by the names a listing carries. A ``file`` is a
#: string naming a readable regular file (``""``: none), given to the bot as an absolute path.
PARAM_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float, "str": str, "file": str}

Number = int | float


def _type_name(default: Any) -> str:
    for name, kind in PARAM_TYPES.items():
        if type(default) is kind:
            return name
    raise ValueError(f"default {default!r} is not a bool, int, float or str")


def _bound_text(value: Number) -> str:
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class ParamRule:
    """What one bot parameter accepts: its type (``"bool"``, ``"int"``, ``"float"``, ``"str"``
    or ``"file"``) and, for numbers, inclusive bounds (``None``: open). A float is never NaN, and
    is infinite only where a bound is: ``(0.0, math.inf)`` allows ``inf``, ``(0.0, None)`` does
    not."""

    kind: str
    low: Number | None = None
    high: Number | None = None

    def __post_init__(self) -> None:
        if self.kind not in PARAM_TYPES:
            raise ValueError(f"type {self.kind!r} is not one of {', '.join(PARAM_TYPES)}")
        if self.kind not in ("int", "float") and (self.low, self.high) != (None, None):
            raise ValueError(f"a {self.kind} parameter has no range")
        for bound in (self.low, self.high):
            if bound is None:
                continue
            if isinstance(bound, bool) or not isinstance(bound, int | float) or bound != bound:
                raise ValueError(f"bound {bound!r} is not a number")
            if self.kind == "int" and not isinstance(bound, int):
                raise ValueError(f"bound {bound!r} of an int parameter is not an int")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"range ({self.low}, {self.high}) is empty")

    def allowed(self) -> str:
        """What the parameter accepts, in words: ``an int >= 1``, ``a float from 0 to 1``."""
        if self.kind == "bool":
            return "true or false"
        if self.kind == "str":
            return "a string"
        if self.kind == "file":
            return "the path of a readable file ('' for none)"
        infinite = any(isinstance(b, float) and math.isinf(b) for b in (self.low, self.high))
        what = "an int" if self.kind == "int" else "a float" if infinite else "a finite float"
        if self.low is not None and self.high is not None:
            return f"{what} from {_bound_text(self.low)} to {_bound_text(self.high)}"
        if self.low is not None:
            return f"{what} >= {_bound_text(self.low)}"
        if self.high is not None:
            return f"{what} <= {_bound_text(self.high)}"
        return what

    def check(self, value: Any) -> Any:
        """``value`` as this parameter's type; :class:`ValueError` if it is not allowed."""
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ValueError
            return value
        if self.kind == "str":
            return value if isinstance(value, str) else format_value(value)
        if self.kind == "file":
            return _readable_file(value if isinstance(value, str) else format_value(value))
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError
        if self.kind == "int":
            if not (isinstance(value, int) or (math.isfinite(value) and value == int(value))):
                raise ValueError
            number: Number = int(value)
        else:
            number = float(value)
            if number != number:
                raise ValueError
            if math.isinf(number) and number not in (self.low, self.high):
                raise ValueError
        if (self.low is not None and number < self.low) or (
            self.high is not None and number > self.high
        ):
            raise ValueError
        return number

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``type``, ``min``, ``max`` (``null`` open, ``"inf"`` infinite)."""

        def bound(value: Number | None) -> Any:
            if isinstance(value, float) and math.isinf(value):
                return _bound_text(value)
            return value

        return {"type": self.kind, "min": bound(self.low), "max": bound(self.high)}

    @classmethod
    def from_json(cls, data: Any) -> ParamRule:
        """The inverse of :meth:`to_json`; :class:`ValueError` or :class:`TypeError` if
        ``data`` is not one."""
        if not isinstance(data, dict):
            raise TypeError(f"parameter rule {str(data)[:80]} is not an object")

        def bound(value: Any) -> Number | None:
            if value in ("inf", "-inf"):
                return float(value)
            return value

        return cls(str(data.get("type")), bound(data.get("min")), bound(data.get("max")))


def _readable_file(text: str) -> str:
    """``text`` as the absolute path of a readable regular file (``""`` stays ``""``);
    :class:`ValueError` if it names none."""
    if not text:
        return ""
    path = os.path.abspath(os.path.expanduser(text))
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise ValueError
    return path


def declare_params(
    bot: str,
    defaults: Mapping[str, Any],
    ranges: Mapping[str, tuple[Number | None, Number | None]] | None = None,
    types: Mapping[str, type | str] | None = None,
) -> dict[str, ParamRule]:
    """The rules of bot ``bot``'s parameters: each default's own type unless ``types`` names
    another (``bool``, ``int``, ``float``, ``str`` or their names), bounded by ``ranges``
    (``(low, high)``, inclusive, ``None`` open). :class:`ValueError` names what is wrong with
    the declaration: a parameter ``ranges`` or ``types`` names that has no default, a bad type
    or range, or a default its own rule refuses."""
    rules: dict[str, ParamRule] = {}
    for extra in sorted({*(ranges or {}), *(types or {})} - set(defaults)):
        raise ValueError(
            f"bot {bot!r} declares a range or type for {extra!r}, which has no default"
        )
    for key, default in defaults.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"bot {bot!r} has a parameter name {key!r} that is not a string")
        declared = (types or {}).get(key)
        kind = (
            _type_name(default)
            if declared is None
            else declared
            if isinstance(declared, str)
            else _type_name(declared())
        )
        try:
            low, high = (ranges or {}).get(key, (None, None))
            rule = ParamRule(kind, low, high)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"bot {bot!r}, parameter {key!r}: {exc}") from None
        try:
            rule.check(default)
        except ValueError:
            raise ValueError(
                f"bot {bot!r}, parameter {key!r}: default {default!r} is not {rule.allowed()}"
            ) from None
        rules[key] = rule
    return rules


def unknown_bot(name: str, known: Iterable[str], broken: Iterable[str] = ()) -> UnknownBotError:
    """The error for a bot called ``name`` that is not among ``known`` (naming the plugins with
    errors, which might have held it)."""
    listed = ", ".join(sorted(known)) or "none installed"
    failed = ", ".join(dict.fromkeys(broken))
    hint = f"; plugins with errors (see arena bots): {failed}" if failed else ""
    return UnknownBotError(f"unknown bot {name!r} (known: {listed}){hint}")


def split_specs(text: str) -> list[str]:
    """Split a comma-separated list of bot specs, keeping commas inside ``[...]``:
    ``"a,b[x=1,y=2]"`` gives ``["a", "b[x=1,y=2]"]``. Empty items are dropped."""
    items: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "," and depth == 0:
            items.append(current)
            current = ""
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        current += char
    items.append(current)
    return [item.strip() for item in items if item.strip()]


@dataclass(frozen=True)
class BotSpec:
    """A bot name with parameter settings; ``str()`` gives the canonical ``name[k=v,...]``."""

    name: str
    params: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}[" + ",".join(f"{k}={format_value(v)}" for k, v in self.params) + "]"

    @classmethod
    def parse(cls, text: str) -> BotSpec:
        """Parse ``name`` or ``name[k=v,...]``; raise UnknownBotError for bad syntax."""
        m = _SPEC.match(text)
        if not m:
            raise UnknownBotError(f"bad bot name {text!r} (expected NAME or NAME[param=value,...])")
        params: dict[str, Any] = {}
        body = m.group(2)
        if body is not None and body.strip():
            for part in body.split(","):
                if "=" not in part:
                    raise UnknownBotError(
                        f"bad parameter {part.strip()!r} in {text!r} (expected param=value)"
                    )
                key, value = (x.strip() for x in part.split("=", 1))
                if not key or not value:
                    raise UnknownBotError(f"bad parameter {part.strip()!r} in {text!r}")
                if key in params:
                    raise UnknownBotError(f"parameter {key!r} given twice in {text!r}")
                params[key] = _parse_value(value)
        return cls(m.group(1), tuple(params.items()))

    def resolve(
        self, defaults: Mapping[str, Any], rules: Mapping[str, ParamRule] | None = None
    ) -> BotSpec:
        """Check the settings against a bot's parameters: their defaults and ``rules`` (by
        default each default's own type, see :func:`declare_params`), cast them to their
        types, and raise :class:`UnknownBotError` naming the bot, the parameter, the value and
        what is allowed for one that breaks its rule. The result lists only settings that
        differ from the default, in the defaults' order, so equal configurations have equal
        canonical names."""
        given = dict(self.params)
        unknown = sorted(set(given) - set(defaults))
        if unknown:
            known = ", ".join(defaults) or "none"
            raise UnknownBotError(
                f"bot {self.name!r} has no parameter {unknown[0]!r} (parameters: {known})"
            )
        declared = dict(rules) if rules is not None else {}
        out = []
        for key, default in defaults.items():
            if key not in given:
                continue
            rule = declared.get(key) or ParamRule(_type_name(default))
            try:
                value = rule.check(given[key])
            except ValueError:
                raise UnknownBotError(
                    f"bot {self.name!r}: {key}={format_value(given[key])} is refused: "
                    f"{key} is {rule.allowed()}"
                ) from None
            if value != default:
                out.append((key, value))
        return BotSpec(self.name, tuple(out))

    def settings(
        self, defaults: Mapping[str, Any], rules: Mapping[str, ParamRule] | None = None
    ) -> dict[str, Any]:
        """The full parameter dict: defaults overridden by this spec's (resolved) settings."""
        return {**defaults, **dict(self.resolve(defaults, rules).params)}
