"""Bot specifications: ``name`` or ``name[param=value,...]`` naming a configured bot."""

from __future__ import annotations

import re
from collections.abc import Iterable
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


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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
        return f"{self.name}[" + ",".join(f"{k}={_format_value(v)}" for k, v in self.params) + "]"

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

    def resolve(self, defaults: dict[str, Any]) -> BotSpec:
        """Check the settings against a bot's parameter defaults and cast them to the defaults'
        types; the result lists only settings that differ from the default, in the defaults'
        order, so equal configurations have equal canonical names."""
        given = dict(self.params)
        unknown = sorted(set(given) - set(defaults))
        if unknown:
            known = ", ".join(defaults) or "none"
            raise UnknownBotError(
                f"bot {self.name!r} has no parameter {unknown[0]!r} (parameters: {known})"
            )
        out = []
        for key, default in defaults.items():
            if key not in given:
                continue
            value = given[key]
            try:
                if isinstance(default, bool):
                    if not isinstance(value, bool):
                        raise ValueError
                elif isinstance(default, int):
                    if isinstance(value, bool) or int(value) != value:
                        raise ValueError
                    value = int(value)
                elif isinstance(default, float):
                    if isinstance(value, bool):
                        raise ValueError
                    value = float(value)
                else:
                    value = str(value)
            except (TypeError, ValueError):
                raise UnknownBotError(
                    f"parameter {key!r} of bot {self.name!r} must be {type(default).__name__}, "
                    f"not {_format_value(given[key])!r}"
                ) from None
            if value != default:
                out.append((key, value))
        return BotSpec(self.name, tuple(out))

    def settings(self, defaults: dict[str, Any]) -> dict[str, Any]:
        """The full parameter dict: defaults overridden by this spec's (resolved) settings."""
        return {**defaults, **dict(self.resolve(defaults).params)}
