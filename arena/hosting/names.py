"""Who owns a bot name (or a plugin deck set's name) when several plugins register it.

A name belongs to one distribution. The rule, applied to every claim the installed plugins make:

1. The arena's own bots (distribution :data:`BUILTIN_DISTRIBUTION`) come first: a name one of
   them registers is theirs, and every other distribution's claim on it is refused.
2. A name only one distribution registers is that distribution's; if it registers the name more
   than once (twice in one plugin, or in two of its plugins), the first registration counts
   (plugins in order of entry-point name, registrations in the order they are made).
3. A name two or more third-party distributions register belongs to none of them: every claim
   is refused and the name cannot be played until one of them is uninstalled. (No order between
   strangers, such as which sorts first or was installed last, can say who was there first.)

Names are compared folded: case and the separators ``-``, ``_``, ``.`` do not tell names apart,
so ``GREEDY`` claims ``greedy`` and ``my_bot`` claims ``my-bot``. A name is ASCII
(:data:`NAME_PATTERN`), so letters of other scripts cannot make a look-alike either. A submitted
package's new name is refused even where it only looks like another distribution's
(:func:`skeleton`: ``caroIbot`` beside ``carolbot``, ``greedy_`` beside ``greedy``), and so are a
competition server's participant and distribution names that look like another participant's.
Each refused claim is one line naming both distributions; the plugin that made it keeps the
names it does own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

#: The distribution of the arena's own (reference) bots.
BUILTIN_DISTRIBUTION = "loveletter-arena"
#: What a registered name must look like: ASCII letters, digits, ``_``, ``-``, ``.``.
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


def canonical(name: str) -> str:
    """``name`` folded for comparison (PEP 503 style): lower case, runs of ``-_.`` as ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


#: What separates the words of a name: left out when names are compared by their looks.
_SEPARATORS = re.compile(r"[-_.\s]+")
#: Characters that look like another once case is folded, each as the one it looks like.
_LOOK_ALIKE = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "!": "l", "5": "s",
                             "2": "z", "8": "b"})  # fmt: skip
#: Pairs of letters that look like one letter, each with that letter.
_LOOK_ALIKE_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))


def skeleton(name: str) -> str:
    """What ``name`` looks like: :func:`canonical`, then without its separators (``-``, ``_``,
    ``.``, white space), each character that looks like another as that one (``0`` as ``o``;
    ``1``, ``i``, ``|`` and ``!`` as ``l``; ``5`` as ``s``; ``2`` as ``z``; ``8`` as ``b``) and
    each pair of letters that looks like one letter as it (``rn`` as ``m``, ``vv`` as ``w``,
    ``cl`` as ``d``). Names of one skeleton can be mistaken for one another: ``caroIbot``,
    ``car0l-bot`` and ``carolbot``; ``greedy_`` and ``greedy``; ``rnybot`` and ``mybot``."""
    folded = _SEPARATORS.sub("", canonical(name)).translate(_LOOK_ALIKE)
    for pair, letter in _LOOK_ALIKE_PAIRS:
        folded = folded.replace(pair, letter)
    return folded


def is_builtin(distribution: str) -> bool:
    """Whether ``distribution`` is the arena's own."""
    return canonical(distribution) == BUILTIN_DISTRIBUTION


def check_name(what: str, name: object) -> str:
    """``name`` if it can name a bot or deck set; else ValueError (one line)."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        shown = repr(name)[:80]
        raise ValueError(
            f"{what} name {shown} is not allowed: use at most 64 ASCII letters, digits, "
            "'_', '-' and '.', starting with a letter or '_'"
        )
    return name


def one_line(text: str) -> str:
    """``text`` on one line: every run of white space (newlines included) becomes one space."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Claim(Generic[T]):
    """A plugin's registration of ``name``: the plugin (entry-point name), its distribution
    (empty for a plugin registered in-process, which is then its own owner) and what it
    registers under the name."""

    name: str
    plugin: str
    distribution: str
    item: T

    @property
    def owner(self) -> str:
        """Who the claim is made for: the folded distribution name, or the plugin."""
        return canonical(self.distribution) if self.distribution else f"plugin {self.plugin}"

    @property
    def source(self) -> str:
        """The claimant as a reader knows it: its distribution, or its plugin."""
        return self.distribution or f"plugin {self.plugin!r}"


@dataclass(frozen=True)
class Refusal:
    """A refused claim: which plugin of which distribution made it, and why (one line)."""

    plugin: str
    distribution: str
    message: str


@dataclass
class Settlement(Generic[T]):
    """The outcome of :func:`settle`: owned names, names nobody may use (with the one-line
    reason), and the refused claims."""

    owned: dict[str, T] = field(default_factory=dict)
    contested: dict[str, str] = field(default_factory=dict)
    refusals: list[Refusal] = field(default_factory=list)

    def why_not(self, name: str) -> str | None:
        """Why ``name`` cannot be used although it was registered, or ``None``."""
        return self.contested.get(canonical(name))


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _refuse(what: str, claim: Claim[T], owner: Claim[T]) -> Refusal:
    if claim.owner != owner.owner:
        reason = (
            f"{what} {claim.name!r} of {claim.source} is refused: the name belongs to "
            f"{owner.source} (choose another name)"
        )
    elif claim.plugin == owner.plugin:
        reason = (
            f"{what} {claim.name!r} registered again by plugin {claim.plugin!r} of "
            f"{claim.source} is refused: the first registration counts"
        )
    else:
        reason = (
            f"{what} {claim.name!r} of plugin {claim.plugin!r} of {claim.source} is refused: "
            f"plugin {owner.plugin!r} registers it first"
        )
    return Refusal(claim.plugin, claim.distribution, reason)


def settle(what: str, claims: Iterable[Claim[T]]) -> Settlement[T]:
    """Apply the ownership rule (module docstring) to ``claims``, given in plugin order (the
    arena's own plugins first, then by distribution and entry-point name) and, within a
    plugin, in registration order. ``what`` names the kind of name (``bot``, ``deck set``)."""
    by_name: dict[str, list[Claim[T]]] = {}
    for claim in claims:
        by_name.setdefault(canonical(claim.name), []).append(claim)
    out: Settlement[T] = Settlement()
    for key, group in by_name.items():
        builtin = [c for c in group if is_builtin(c.distribution)]
        owners = list(dict.fromkeys(c.owner for c in group))
        if builtin or len(owners) == 1:
            first = (builtin or group)[0]
            out.owned[first.name] = first.item
            out.refusals += [_refuse(what, c, first) for c in group if c is not first]
            continue
        sources = list(dict.fromkeys(c.source for c in group))
        reason = (
            f"{what} {group[0].name!r} is refused: {_listing(sources)} "
            f"{'both' if len(sources) == 2 else 'all'} register it, and a name several "
            "distributions claim belongs to none of them (uninstall all but one)"
        )
        out.contested[key] = reason
        seen = set()
        for claim in group:
            if (claim.plugin, claim.distribution) not in seen:
                seen.add((claim.plugin, claim.distribution))
                out.refusals.append(Refusal(claim.plugin, claim.distribution, reason))
    return out
