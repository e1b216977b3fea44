"""Plugin discovery and the bot registry, through pluggy and the ``arena.bots`` entry points.

A plugin is identified by its distribution and its entry-point name, written
``DISTRIBUTION:ENTRY_POINT`` (:func:`plugin_ref`), since two distributions may both call an entry
point ``reference``. :func:`load_registry` imports plugins and collects what they register,
settling names by the ownership rule of :mod:`arena.hosting.names`. It is what a bot's host process
does (for its one plugin); it runs third-party code, so the referee's own process does not call it
for untrusted bots.
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pluggy

from arena import hookspecs
from arena.botspec import BotSpec, Number, ParamRule, declare_params, unknown_bot
from arena.errors import UnknownBotError
from arena.hosting.names import (
    BUILTIN_DISTRIBUTION,
    Claim,
    Settlement,
    canonical,
    check_name,
    is_builtin,
    one_line,
    settle,
)
from arena.hosting.submissions import REF_PREFIX, main_dist_info, parse_ref

GROUP = "arena.bots"


@dataclass(frozen=True)
class BotInfo:
    """A registered bot: its name, factory, one-line description, parameter defaults, the
    plugin, distribution and version it comes from, what it plays, and the rule of each
    parameter (see :func:`~arena.botspec.declare_params`)."""

    name: str
    factory: Callable[..., Any] = field(repr=False)
    description: str
    params: dict[str, Any]
    plugin: str
    distribution: str
    version: str
    variants: tuple[str, ...] = ("classic", "huibers")
    players: tuple[int, ...] = (2, 3, 4)
    rules: dict[str, ParamRule] = field(default_factory=dict)

    def build(self, spec: BotSpec | None = None) -> Any:
        """A new bot configured by ``spec`` (defaults when ``None``)."""
        settings = (spec or BotSpec(self.name)).settings(self.params, self.rules)
        return self.factory(**settings)


@dataclass(frozen=True)
class DeckSetInfo:
    """A registered deck set: name, loader, description and the plugin it comes from."""

    name: str
    loader: Callable[..., Any] = field(repr=False)
    description: str
    plugin: str


@dataclass(frozen=True)
class PluginError:
    """A plugin that could not be loaded or failed while registering."""

    plugin: str
    distribution: str
    error: str


@dataclass
class Registry:
    """Everything the loaded plugins registered, and the plugins that failed."""

    bots: dict[str, BotInfo] = field(default_factory=dict)
    deck_sets: dict[str, DeckSetInfo] = field(default_factory=dict)
    errors: list[PluginError] = field(default_factory=list)
    #: Names registered by several distributions, which none may use: name -> why (one line).
    contested: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> BotInfo:
        """The bot called ``name``; raises UnknownBotError naming the known bots (or why a
        registered name may not be used)."""
        if name in self.bots:
            return self.bots[name]
        raise refused_bot(name, self.contested) or unknown_bot(
            name, self.bots, [e.plugin for e in self.errors]
        )

    def build(self, text: str | BotSpec) -> tuple[BotSpec, Any]:
        """Parse a bot spec, check it, and build the bot; returns (canonical spec, bot)."""
        spec = BotSpec.parse(text) if isinstance(text, str) else text
        info = self.get(spec.name)
        canonical = spec.resolve(info.params, info.rules)
        return canonical, info.build(canonical)


def refused_bot(name: str, contested: dict[str, str]) -> UnknownBotError | None:
    """The error for bot ``name`` when two distributions claim it, else ``None``."""
    why = contested.get(canonical(name))
    return UnknownBotError(why) if why else None


def claimed_variants(bot: str, variants: Iterable[str] | None) -> tuple[str, ...]:
    """The variants bot ``bot`` says it plays (``None``: every variant); ValueError (one line)
    for an empty claim or a name that is not a variant."""
    from arena.game.variants import VARIANTS

    if variants is None:
        return tuple(VARIANTS)
    claimed = tuple(variants)
    unknown = [v for v in claimed if v not in VARIANTS]
    if unknown or not claimed:
        raise ValueError(f"bot {bot!r} claims unknown variants {unknown or claimed!r}")
    return claimed


def claimed_players(bot: str, players: Iterable[int] | None) -> tuple[int, ...]:
    """The table sizes bot ``bot`` says it plays at (``None``: 2 to 4), sorted; ValueError (one
    line) for an empty claim or a size the game does not have."""
    if players is None:
        return (2, 3, 4)
    claimed = tuple(sorted(set(players)))
    if not claimed or any(p not in (2, 3, 4) for p in claimed):
        raise ValueError(f"bot {bot!r} claims player counts {claimed!r} (2 to 4 are possible)")
    return claimed


def _distribution_of(ep: md.EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


def plugin_ref(distribution: str, entry_point: str) -> str:
    """How a host is told which plugin to load: ``DISTRIBUTION:ENTRY_POINT`` (just the entry
    point when the distribution is unknown); a submitted plugin is known by its own reference,
    ``@SHA256:ENTRY_POINT`` (:func:`arena.hosting.submissions.submission_ref`), kept as it is."""
    if entry_point.startswith(REF_PREFIX):
        return entry_point
    return f"{distribution}:{entry_point}" if distribution else entry_point


#: The arena's own plugin (the reference bots), as a host is told to load it.
BUILTIN_PLUGIN = plugin_ref(BUILTIN_DISTRIBUTION, "reference")


@dataclass(frozen=True)
class PluginInfo:
    """An ``arena.bots`` entry point as its metadata describes it (nothing imported)."""

    name: str
    value: str
    distribution: str
    version: str
    #: The installed distribution (``None``: unknown): its files are what the catalog keeps
    #: the plugin's listing by (:mod:`arena.hosting.listing_cache`).
    dist: md.Distribution | None = field(default=None, compare=False, repr=False)

    @property
    def ref(self) -> str:
        """The plugin's :func:`plugin_ref`."""
        return plugin_ref(self.distribution, self.name)


def _plugin_order(ep: md.EntryPoint) -> tuple[bool, str, str]:
    dist = _distribution_of(ep)[0]
    return (not is_builtin(dist), canonical(dist), ep.name)


def _entry_points() -> list[md.EntryPoint]:
    """The ``arena.bots`` entry points: the arena's own first, then by distribution and name."""
    return sorted(md.entry_points(group=GROUP), key=_plugin_order)


def plugin_entry_points() -> list[PluginInfo]:
    """Every ``arena.bots`` entry point, read from installed metadata only, in plugin order (the
    arena's own first, then by distribution and entry-point name)."""
    out = []
    for ep in _entry_points():
        dist, version = _distribution_of(ep)
        out.append(PluginInfo(ep.name, ep.value, dist, version, getattr(ep, "dist", None)))
    return out


def find_entry_point(ref: str) -> md.EntryPoint:
    """The one entry point ``ref`` names: ``DISTRIBUTION:ENTRY_POINT``, or ``ENTRY_POINT`` when
    a single distribution has an entry point of that name. Raises :class:`UnknownBotError` (one
    line) when there is none or the name is ambiguous."""
    dist, colon, name = ref.partition(":")  # a distribution's name never holds a ':'
    if not colon:
        dist, name = "", ref
    found = [
        ep
        for ep in _entry_points()
        if ep.name == name and (not dist or canonical(_distribution_of(ep)[0]) == canonical(dist))
    ]
    if not found:
        raise UnknownBotError(f"no {GROUP!r} entry point {ref!r} is installed")
    if len(found) > 1:
        sources = ", ".join(plugin_ref(_distribution_of(ep)[0], name) for ep in found)
        raise UnknownBotError(
            f"{len(found)} {GROUP!r} entry points are called {name!r} ({sources}); "
            "name one as DISTRIBUTION:ENTRY_POINT"
        )
    return found[0]


def submission_entry_point(ref: str, snapshot: str) -> md.EntryPoint:
    """The entry point a submission's reference (``@SHA256:ENTRY_POINT``) names, read from the
    metadata of its snapshot ``snapshot`` (which the host has appended to ``sys.path``): its own
    ``*.dist-info``, the one the arena noted (:func:`~arena.hosting.submissions.main_dist_info`).
    This runs in the submission's sandboxed host; the arena itself read the same file with a
    strict reader of its own when it was submitted."""
    parsed = parse_ref(ref)
    assert parsed is not None
    from pathlib import Path

    dist = md.PathDistribution(Path(snapshot) / main_dist_info(Path(snapshot)))
    for ep in dist.entry_points:
        if ep.group == GROUP and ep.name == parsed[1]:
            return ep
    raise UnknownBotError(f"the submission has no {GROUP!r} entry point {parsed[1]!r}")


def _failure(exc: BaseException) -> str:
    return one_line(f"{type(exc).__name__}: {exc}")


def load_registry(
    extra_plugins: Iterable[tuple[str, object]] = (),
    entry_points: bool = True,
    only: str | None = None,
    snapshot: str | None = None,
) -> Registry:
    """Load the ``arena.bots`` plugins (and ``extra_plugins``, as ``(name, plugin)`` pairs, with
    no distribution) and collect their bots and deck sets, their names settled by the rule of
    :mod:`arena.hosting.names`. A plugin that fails, and every refused name, is listed in
    ``errors``; the rest load. With ``only`` (a :func:`plugin_ref`), just that one entry point is
    loaded (a bot host loads its own plugin and no other); :class:`UnknownBotError` if there is
    none. A submitted plugin (``only`` is ``@SHA256:ENTRY_POINT``) is found in the metadata of
    its ``snapshot``.
    """
    registry = Registry()
    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    origin: dict[str, tuple[str, str, str]] = {}  # pluggy name -> plugin, distribution, version
    if entry_points:
        if only is not None and snapshot is not None:
            found = [submission_entry_point(only, snapshot)]
        else:
            found = [find_entry_point(only)] if only is not None else _entry_points()
        for ep in found:
            dist, version = _distribution_of(ep)
            ref = plugin_ref(dist, ep.name)
            try:
                pm.register(ep.load(), name=ref)
                origin[ref] = (ep.name, dist, version)
            except (Exception, SystemExit) as exc:  # a plugin may even call sys.exit at import
                registry.errors.append(PluginError(ep.name, dist, _failure(exc)))
    for name, plugin in extra_plugins:
        pm.register(plugin, name=name)
        origin[name] = (name, "", "")

    bots: list[Claim[BotInfo]] = []
    for impl in reversed(pm.hook.arena_register_bots.get_hookimpls()):
        plugin, dist, version = origin[impl.plugin_name]

        def register_bot(
            name: str,
            factory: Callable[..., Any],
            description: str = "",
            params: dict[str, Any] | None = None,
            variants: Iterable[str] | None = None,
            players: Iterable[int] | None = None,
            ranges: dict[str, tuple[Number | None, Number | None]] | None = None,
            types: dict[str, type | str] | None = None,
            _plugin: str = plugin,
            _dist: str = dist,
            _version: str = version,
        ) -> None:
            defaults = dict(params or {})
            info = BotInfo(
                check_name("bot", name),
                factory,
                description,
                defaults,
                _plugin,
                _dist,
                _version,
                claimed_variants(name, variants),
                claimed_players(name, players),
                declare_params(name, defaults, ranges, types),
            )
            bots.append(Claim(name, _plugin, _dist, info))

        try:
            impl.function(register=register_bot)
        except Exception as exc:
            registry.errors.append(PluginError(plugin, dist, _failure(exc)))

    deck_sets: list[Claim[DeckSetInfo]] = []
    for impl in reversed(pm.hook.arena_register_deck_sets.get_hookimpls()):
        plugin, dist, _ = origin[impl.plugin_name]

        def register_deck_set(
            name: str,
            loader: Callable[..., Any],
            description: str = "",
            _plugin: str = plugin,
            _dist: str = dist,
        ) -> None:
            info = DeckSetInfo(check_name("deck set", name), loader, description, _plugin)
            deck_sets.append(Claim(name, _plugin, _dist, info))

        try:
            impl.function(register=register_deck_set)
        except Exception as exc:
            registry.errors.append(PluginError(plugin, dist, _failure(exc)))

    owned_bots, owned_decks = settle("bot", bots), settle("deck set", deck_sets)
    registry.bots, registry.contested = owned_bots.owned, owned_bots.contested
    registry.deck_sets = owned_decks.owned
    registry.errors += refusal_errors(owned_bots, owned_decks)
    return registry


def refusal_errors(*settled: Settlement[Any]) -> list[PluginError]:
    """The refused claims of ``settled`` as plugin errors."""
    return [PluginError(r.plugin, r.distribution, r.message) for s in settled for r in s.refusals]
