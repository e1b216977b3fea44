"""Named deck sets: the fixed orders a tournament plays, each deck twice with seats swapped.

Specs understood by :func:`load_deck_set`:

- ``fixed36``: 36 balanced deck orders shipped with the package (``arena/decks/data/fixed36.txt``),
  made by :func:`generate_fixed36`; ``docs/decks.md`` states the criterion.
- ``balanced:N[:SEED]``: ``N`` decks chosen with ``fixed36``'s criterion and set-aside quota
  from candidates ``derive_seed(SEED, "balanced", k)`` (:func:`generate_balanced`).
- ``random:N[:SEED]``: ``N`` decks, deck ``k`` shuffled from ``derive_seed(SEED, "deck", k)``.
- ``file:PATH``: a text file with one deck per line (16 card names or values, top card first).
- any other name: a deck set contributed by a plugin (``Catalog.deck_sets``).

``balanced:N`` and ``random:N`` without a seed are *secret* specs
(:func:`~arena.decks.specs.is_secret_spec`): a tournament draws a new seed for them with
:func:`~arena.decks.specs.draw_secret_seed`, keeps it where no bot can see it and publishes it
once the tournament is finished; :func:`~arena.decks.specs.reproducible_spec` names the public
spec that gives the same decks. Every other spec is public: a bot can know its decks.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.decks.specs import (
    SEEDED_FAMILIES,
    DeckSetError,
    is_secret_spec,
)
from arena.engine.layout import CARD_COUNTS
from arena.errors import InvalidDeckError
from arena.game.cards import Card
from arena.game.deck import check_deck, parse_deck, shuffled_deck
from arena.game.variants import Variant
from arena.seeds import derive_seed

if TYPE_CHECKING:
    from arena.hosting.catalog import Catalog

#: The seed :func:`generate_fixed36` draws candidate decks from.
FIXED36_SEED = 2018
#: Bump when the generator or its criterion changes (the shipped file names it).
FIXED36_GENERATOR = "fixed36-generator/1"
#: How many decks ``fixed36`` holds.
FIXED36_SIZE = 36
#: Half-width of the band around the mean opening chance that both seats' starts must lie in.
BAND = 0.08
#: Most decks ``random:N`` and ``balanced:N`` may ask for.
MAX_RANDOM_DECKS = 100_000

Deck = tuple[int, ...]


@dataclass(frozen=True)
class DeckSet:
    """A named list of deck orders for one variant: card values, top card first.

    ``public`` is False for a set drawn from a secret seed (``balanced:N``, ``random:N``): no
    bot can know its decks in advance. Its ``name`` is the spec, without the seed.
    """

    name: str
    variant: str
    decks: tuple[Deck, ...]
    description: str
    public: bool = True

    def __len__(self) -> int:
        return len(self.decks)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "variant": self.variant,
            "description": self.description,
            "public": self.public,
            "decks": [list(d) for d in self.decks],
        }


def load_deck_set(
    spec: str,
    variant: str = "classic",
    catalog: Catalog | None = None,
    secret: int | None = None,
) -> DeckSet:
    """The deck set named by ``spec`` for ``variant``; every deck is checked against the
    variant's cards. A secret spec (:func:`~arena.decks.specs.is_secret_spec`) needs its
    tournament's ``secret`` seed, and only a secret spec takes one. Raises :class:`DeckSetError` (an
    :class:`~arena.errors.ArenaError`) with a one-line message for a bad spec, file or deck, and
    for a secret spec without its seed (which says so plainly: ``arena decks show`` prints it)."""
    var = Variant.get(variant).name
    spec = spec.strip()
    if secret is not None and not is_secret_spec(spec):
        raise DeckSetError(f"deck set {spec!r} is public: it takes no secret seed")
    family = spec.split(":", 1)[0]
    if family in SEEDED_FAMILIES and spec != family:
        return _seeded(spec, var, secret)
    if spec == "fixed36":
        return _fixed36(var)
    if spec.startswith("file:"):
        return _from_file(spec[len("file:") :], var)
    if catalog is not None and spec in catalog.deck_sets:
        return _from_plugin(catalog, spec, var)
    known = ["fixed36", "balanced:N[:SEED]", "random:N[:SEED]", "file:PATH"]
    if catalog is not None:
        known += sorted(catalog.deck_sets)
    raise DeckSetError(f"unknown deck set {spec!r} (known: {', '.join(known)})")


def _values(cards: Sequence[int]) -> Deck:
    return tuple(int(c) for c in cards)


def _fixed36(variant: str) -> DeckSet:
    text = resources.files("arena.decks").joinpath("data/fixed36.txt").read_text(encoding="utf-8")
    decks = parse_deck_lines(text.splitlines(), variant, "fixed36.txt")
    if len(decks) != FIXED36_SIZE:
        raise DeckSetError(f"fixed36.txt holds {len(decks)} decks instead of {FIXED36_SIZE}")
    return DeckSet(
        "fixed36",
        variant,
        decks,
        f"{FIXED36_SIZE} deck orders where neither seat starts decisively (docs/decks.md)",
    )


def _seeded(spec: str, variant: str, secret: int | None) -> DeckSet:
    """``random:N[:SEED]`` or ``balanced:N[:SEED]``; without SEED, from ``secret``."""
    family, *parts = spec.split(":")
    usage = f"{family}:N[:SEED]"
    if len(parts) not in (1, 2):
        raise DeckSetError(f"bad deck set {spec!r}: expected {usage}")
    try:
        count = int(parts[0])
        seed = int(parts[1]) if len(parts) == 2 else None
    except ValueError:
        raise DeckSetError(
            f"bad deck set {spec!r}: N and SEED must be whole numbers ({usage})"
        ) from None
    if not 1 <= count <= MAX_RANDOM_DECKS:
        raise DeckSetError(f"bad deck set {spec!r}: N must be 1 to {MAX_RANDOM_DECKS}")
    public = seed is not None
    used = seed if seed is not None else secret
    if used is None:
        raise DeckSetError(
            f"{family}:{count} is drawn from a new secret seed for each tournament, so it has "
            "no decks to show; a tournament's report publishes its seed once it is finished, "
            f"and then `arena decks show {family}:{count}:SEED` shows its decks"
        )
    if family == "balanced":
        _check_balance_applies(variant)
        decks = generate_balanced(count, used)
        what = f"{count} balanced decks (fixed36's criterion)"
    else:
        decks = tuple(
            _values(shuffled_deck(derive_seed(used, "deck", k), variant)) for k in range(count)
        )
        what = f"{count} decks shuffled"
    if public:
        return DeckSet(f"{family}:{count}:{seed}", variant, decks, f"{what} from seed {seed}")
    return DeckSet(f"{family}:{count}", variant, decks, f"{what} from a secret seed", public=False)


def _check_balance_applies(variant: str) -> None:
    """The balance criterion is measured on the 16 classic cards: refuse other card sets."""
    counts = Counter(int(c) for c in Variant.get(variant).cards)
    if [counts.get(v, 0) for v in range(1, 9)] != [int(c) for c in CARD_COUNTS[1:]]:
        raise DeckSetError(f"balanced decks need the 16 classic cards; {variant} has others")


def parse_deck_lines(lines: Sequence[str], variant: str, where: str) -> tuple[Deck, ...]:
    """The decks in ``lines`` (one a line; ``#`` starts a comment; blank lines skipped). Raises
    :class:`DeckSetError` naming ``where`` and the line number of the first bad deck."""
    decks = []
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            decks.append(_values(parse_deck(text, variant)))
        except InvalidDeckError as exc:
            raise DeckSetError(f"deck file {where} line {number}: {exc}") from None
    return tuple(decks)


def _from_file(path_text: str, variant: str) -> DeckSet:
    if not path_text:
        raise DeckSetError("bad deck set 'file:': expected file:PATH")
    path = Path(path_text)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DeckSetError(f"deck file {path_text} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise DeckSetError(f"deck file {path_text} cannot be read: {reason}") from None
    decks = parse_deck_lines(text.splitlines(), variant, path_text)
    if not decks:
        raise DeckSetError(f"deck file {path_text} holds no decks")
    return DeckSet(f"file:{path_text}", variant, decks, f"{len(decks)} decks from {path_text}")


def _from_plugin(catalog: Catalog, name: str, variant: str) -> DeckSet:
    entry = catalog.deck_sets[name]
    lists = entry.decks.get(variant)
    if not lists:
        raise DeckSetError(
            f"deck set {name!r} (plugin {entry.plugin!r}) has no decks for variant {variant!r}"
        )
    decks = []
    for k, deck in enumerate(lists):
        try:
            decks.append(_values(parse_deck(list(deck), variant)))
        except (InvalidDeckError, TypeError) as exc:
            raise DeckSetError(
                f"deck set {name!r} (plugin {entry.plugin!r}) deck {k + 1}: {exc}"
            ) from None
    return DeckSet(name, variant, tuple(decks), entry.description)


# --- balance: the fixed36 criterion ------------------------------------------------------------


@dataclass(frozen=True)
class Openings:
    """The solver's opening chances f(b1, b2) and their mean over all deals of the deck."""

    chance: dict[tuple[int, int], float]
    mean: float

    def of(self, a: int, b: int) -> float:
        """The first mover's chance holding ``a`` and ``b`` at its first decision."""
        return self.chance[(min(a, b), max(a, b))]


def openings() -> Openings:
    """Read the ``huibers`` opening table (building the solver's table if not cached)."""
    import solver

    rows = solver.opening_rows(solver.load_table("huibers"))
    chance = {(int(r["b1"]), int(r["b2"])): float(r["chance"]) for r in rows}
    counts = [int(c) for c in CARD_COUNTS]
    total = sum(counts)
    mean = 0.0
    for (b1, b2), f in chance.items():
        if b1 == b2:
            p = counts[b1] * (counts[b1] - 1) / (total * (total - 1))
        else:
            p = 2 * counts[b1] * counts[b2] / (total * (total - 1))
        mean += p * f
    return Openings(chance, mean)


def seat_chances(deck: Sequence[int], table: Openings) -> tuple[float, float]:
    """The two seats' start in the ``huibers`` layout: seat 0's opening chance with
    ``deck[1], deck[3]``, and the chance seat 1's card ``deck[2]`` would have with ``deck[3]``."""
    return table.of(deck[1], deck[3]), table.of(deck[2], deck[3])


def passes_criterion(deck: Sequence[int], table: Openings) -> bool:
    """Neither seat's start is decisive: both chances of :func:`seat_chances` lie within
    ``BAND`` of the mean opening chance, and neither is a certain win."""
    return all(abs(f - table.mean) <= BAND and f < 1.0 for f in seat_chances(deck, table))


def set_aside_quota(size: int = FIXED36_SIZE) -> dict[int, tuple[int, int]]:
    """For each card value, the fewest and most decks of ``size`` that may set it aside:
    ``size * copies / 16`` rounded down and up."""
    counts = [int(c) for c in CARD_COUNTS]
    total = sum(counts)
    return {
        v: (math.floor(size * counts[v] / total), math.ceil(size * counts[v] / total))
        for v in range(1, 9)
    }


def generate_fixed36(seed: int = FIXED36_SEED) -> tuple[tuple[Deck, ...], Openings]:
    """The ``fixed36`` set: :func:`generate_balanced` of 36 decks from ``seed`` with the key
    ``"fixed36"``, and the opening table it was measured with."""
    table = openings()
    return generate_balanced(FIXED36_SIZE, seed, "fixed36", table), table


def generate_balanced(
    count: int, seed: int, key: str = "balanced", table: Openings | None = None
) -> tuple[Deck, ...]:
    """Draw candidate decks ``shuffled_deck(derive_seed(seed, key, k))`` for k = 0, 1, ... and
    keep those that pass :func:`passes_criterion` while the set-aside quota of ``count`` decks
    allows (:func:`set_aside_quota`): a value is kept while below its floor, or below its
    ceiling while the decks above floors number fewer than ``count - sum(floors)``. The first
    ``count`` kept are the set."""
    table = table if table is not None else openings()
    quota = set_aside_quota(count)
    spare = count - sum(lo for lo, _ in quota.values())
    kept: list[Deck] = []
    taken: Counter[int] = Counter()
    extras = 0
    k = 0
    while len(kept) < count:
        if k > 100 * count + 1_000_000:  # pragma: no cover - a third of decks pass
            raise DeckSetError(f"{key}: too few decks pass the criterion")
        deck = _values(shuffled_deck(derive_seed(seed, key, k), "classic"))
        k += 1
        if not passes_criterion(deck, table):
            continue
        lo, hi = quota[deck[0]]
        if taken[deck[0]] < lo:
            pass
        elif taken[deck[0]] < hi and extras < spare:
            extras += 1
        else:
            continue
        taken[deck[0]] += 1
        kept.append(deck)
    return tuple(kept)


def fixed36_text(seed: int = FIXED36_SEED) -> str:
    """The contents of ``arena/decks/data/fixed36.txt`` as :func:`generate_fixed36` makes them."""
    decks, table = generate_fixed36(seed)
    lo_band, hi_band = table.mean - BAND, table.mean + BAND
    lines = [
        f"# fixed36: {FIXED36_SIZE} deck orders, top card first; made by {FIXED36_GENERATOR},"
        f" seed {seed}.",
        "# Regenerate with: arena decks generate fixed36",
        "# Criterion (huibers 2-player layout: deck[0] set aside, seat 0 gets deck[1],",
        "# seat 1 gets deck[2], seat 0 draws deck[3]; f = the solver's opening chance):",
        f"#   f(deck[1], deck[3]) and f(deck[2], deck[3]) both within {BAND:.2f} of the mean"
        f" opening chance {table.mean:.6f}",
        f"#   over all deals, i.e. in [{lo_band:.6f}, {hi_band:.6f}], and below 1 (no certain"
        " first-turn win);",
        "#   set-aside card deck[0]: each value in floor/ceil of 36 * copies / 16 decks.",
    ]
    for deck in decks:
        lines.append(" ".join(str(v) for v in deck))
    return "\n".join(lines) + "\n"


def default_fixed36_path() -> Path:
    """Where the package keeps ``fixed36.txt``."""
    return Path(__file__).parent / "data" / "fixed36.txt"


def balance(deck_set: DeckSet, table: Openings | None = None) -> dict[str, Any]:
    """The balance figures of a deck set: both seats' opening chances (mean, spread, range,
    per deck) and how often each card is set aside."""
    table = table if table is not None else openings()
    pairs = [seat_chances(d, table) for d in deck_set.decks]

    def stats(values: list[float]) -> dict[str, float]:
        m = sum(values) / len(values)
        sd = math.sqrt(sum((v - m) ** 2 for v in values) / len(values))
        return {
            "mean": round(m, 6),
            "sd": round(sd, 6),
            "min": round(min(values), 6),
            "max": round(max(values), 6),
        }

    aside = Counter(d[0] for d in deck_set.decks)
    return {
        "mean_opening": round(table.mean, 6),
        "band": [round(table.mean - BAND, 6), round(table.mean + BAND, 6)],
        "seat0": stats([a for a, _ in pairs]),
        "seat1": stats([b for _, b in pairs]),
        "passing": sum(passes_criterion(d, table) for d in deck_set.decks),
        "set_aside": {str(Card(v)): aside.get(v, 0) for v in range(1, 9)},
        "openings": [[round(a, 6), round(b, 6)] for a, b in pairs],
    }


def check_deck_set(deck_set: DeckSet) -> None:
    """Check every deck of ``deck_set`` against its variant's cards (raises
    :class:`~arena.errors.InvalidDeckError`)."""
    for deck in deck_set.decks:
        check_deck([Card(v) for v in deck], deck_set.variant)
