"""Plugin discovery and the bot registry, through pluggy and the ``arena.bots`` entry points.

:func:`load_registry` imports the plugins named by the entry points and collects what they
register. It is what a bot's host process does; it runs third-party code, so the referee's own
process does not call it for untrusted bots.
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pluggy

from arena import hookspecs
from arena.botspec import BotSpec, unknown_bot
from arena.errors import UnknownBotError

GROUP = "arena.bots"


@dataclass(frozen=True)
class BotInfo:
    """A registered bot: its name, factory, one-line description, parameter defaults, and the
    plugin, distribution and version it comes from."""

    name: str
    factory: Callable[..., Any] = field(repr=False)
    description: str
    params: dict[str, Any]
    plugin: str
    distribution: str
    version: str
    variants: tuple[str, ...] = ("classic", "huibers")
    players: tuple[int, ...] = (2, 3, 4)

    def build(self, spec: BotSpec | None = None) -> Any:
        """A new bot configured by ``spec`` (defaults when ``None``)."""
        settings = (spec or BotSpec(self.name)).settings(self.params)
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

    def get(self, name: str) -> BotInfo:
        """The bot called ``name``; raises UnknownBotError naming the known bots."""
        try:
            return self.bots[name]
        except KeyError:
            raise unknown_bot(name, self.bots, [e.plugin for e in self.errors]) from None

    def build(self, text: str | BotSpec) -> tuple[BotSpec, Any]:
        """Parse a bot spec, check it, and build the bot; returns (canonical spec, bot)."""
        spec = BotSpec.parse(text) if isinstance(text, str) else text
        info = self.get(spec.name)
        canonical = spec.resolve(info.params)
        return canonical, info.build(canonical)


def _claimed_variants(bot: str, variants: Iterable[str] | None) -> tuple[str, ...]:
    from arena.game.variants import VARIANTS

    if variants is None:
        return tuple(VARIANTS)
    claimed = tuple(variants)
    unknown = [v for v in claimed if v not in VARIANTS]
    if unknown or not claimed:
        raise ValueError(f"bot {bot!r} claims unknown variants {unknown or claimed!r}")
    return claimed


def _claimed_players(bot: str, players: Iterable[int] | None) -> tuple[int, ...]:
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


@dataclass(frozen=True)
class PluginInfo:
    """An ``arena.bots`` entry point as its metadata describes it (nothing imported)."""

    name: str
    value: str
    distribution: str
    version: str


def plugin_entry_points() -> list[PluginInfo]:
    """Every ``arena.bots`` entry point, by name, read from installed metadata only."""
    out = []
    for ep in sorted(md.entry_points(group=GROUP), key=lambda e: e.name):
        dist, version = _distribution_of(ep)
        out.append(PluginInfo(ep.name, ep.value, dist, version))
    return out


def load_registry(
    extra_plugins: Iterable[tuple[str, object]] = (),
    entry_points: bool = True,
    only: str | None = None,
) -> Registry:
    """Load the ``arena.bots`` plugins (and ``extra_plugins``, as ``(name, plugin)`` pairs) and
    collect their bots and deck sets. A plugin that fails is listed in ``errors``; the rest load.
    With ``only``, just the entry point of that name is loaded (a bot host loads its own plugin
    and no other); :class:`UnknownBotError` if there is none.
    """
    registry = Registry()
    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    origin: dict[str, tuple[str, str]] = {}
    if entry_points:
        found = sorted(md.entry_points(group=GROUP), key=lambda e: e.name)
        if only is not None:
            found = [ep for ep in found if ep.name == only]
            if not found:
                raise UnknownBotError(f"no {GROUP!r} entry point is called {only!r}")
        for ep in found:
            dist, version = _distribution_of(ep)
            try:
                pm.register(ep.load(), name=ep.name)
                origin[ep.name] = (dist, version)
            except Exception as exc:
                registry.errors.append(PluginError(ep.name, dist, f"{type(exc).__name__}: {exc}"))
    for name, plugin in extra_plugins:
        pm.register(plugin, name=name)
        origin[name] = ("", "")

    for impl in reversed(pm.hook.arena_register_bots.get_hookimpls()):
        plugin_name = impl.plugin_name
        dist, version = origin.get(plugin_name, ("", ""))

        def register_bot(
            name: str,
            factory: Callable[..., Any],
            description: str = "",
            params: dict[str, Any] | None = None,
            variants: Iterable[str] | None = None,
            players: Iterable[int] | None = None,
            _plugin: str = plugin_name,
            _dist: str = dist,
            _version: str = version,
        ) -> None:
            if name in registry.bots:
                raise ValueError(
                    f"bot {name!r} is already registered by {registry.bots[name].plugin!r}"
                )
            registry.bots[name] = BotInfo(
                name,
                factory,
                description,
                dict(params or {}),
                _plugin,
                _dist,
                _version,
                _claimed_variants(name, variants),
                _claimed_players(name, players),
            )

        try:
            impl.function(register=register_bot)
        except Exception as exc:
            registry.errors.append(PluginError(plugin_name, dist, f"{type(exc).__name__}: {exc}"))

    for impl in reversed(pm.hook.arena_register_deck_sets.get_hookimpls()):
        plugin_name = impl.plugin_name

        def register_deck_set(
            name: str, loader: Callable[..., Any], description: str = "", _plugin: str = plugin_name
        ) -> None:
            registry.deck_sets[name] = DeckSetInfo(name, loader, description, _plugin)

        try:
            impl.function(register=register_deck_set)
        except Exception as exc:
            dist = origin.get(plugin_name, ("", ""))[0]
            registry.errors.append(PluginError(plugin_name, dist, f"{type(exc).__name__}: {exc}"))
    return registry
