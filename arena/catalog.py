"""The bots installed here, as the referee's process knows them: without importing any of them.

Entry-point metadata names the plugins; each plugin is asked, in its own sandboxed host process
(``python -m arena.host --plugin NAME --list``), which bots it registers with which parameters.
A plugin that fails to import, hangs or crashes is listed with its error; the others still work.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from arena import protocol as P
from arena.botspec import BotSpec, unknown_bot
from arena.plugins import PluginError, PluginInfo, plugin_entry_points
from arena.sandbox import Sandbox, choose_sandbox

#: Seconds a plugin may take to describe itself.
LIST_TIME = 60.0


@dataclass(frozen=True)
class BotEntry:
    """A bot a plugin registers: name, description, parameter defaults, and where it comes from."""

    name: str
    description: str
    params: dict[str, Any]
    plugin: str
    distribution: str
    version: str
    variants: tuple[str, ...] = ("classic", "huibers")
    players: tuple[int, ...] = (2, 3, 4)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "description": self.description,
            "params": dict(self.params),
            "plugin": self.plugin,
            "distribution": self.distribution,
            "version": self.version,
            "variants": list(self.variants),
            "players": list(self.players),
        }


@dataclass(frozen=True)
class DeckSetEntry:
    """A deck set a plugin contributes: its decks (card values, top first) per variant."""

    name: str
    description: str
    decks: dict[str, list[list[int]]] = field(repr=False)
    plugin: str


@dataclass
class Catalog:
    """Every bot and plugin deck set found, by name, and every plugin that failed."""

    bots: dict[str, BotEntry] = field(default_factory=dict)
    deck_sets: dict[str, DeckSetEntry] = field(default_factory=dict)
    errors: list[PluginError] = field(default_factory=list)

    def resolve(self, text: str | BotSpec) -> tuple[BotSpec, BotEntry]:
        """The canonical spec and the entry of a bot named ``NAME[param=value,...]``; raises
        :class:`~arena.errors.UnknownBotError` for an unknown bot or a bad parameter."""
        spec = BotSpec.parse(text) if isinstance(text, str) else text
        entry = self.bots.get(spec.name)
        if entry is None:
            raise unknown_bot(spec.name, self.bots, [e.plugin for e in self.errors])
        return spec.resolve(entry.params), entry


def _listing_error(plugin: PluginInfo, message: str) -> PluginError:
    return PluginError(plugin.name, plugin.distribution, message)


def _taken(
    catalog: Catalog, plugin: PluginInfo, what: str, name: str, taken: dict[str, Any]
) -> bool:
    """Whether ``name`` is taken (the first plugin keeps it; this one's is an error)."""
    if name not in taken:
        return False
    other = taken[name].plugin
    catalog.errors.append(
        _listing_error(plugin, f"{what} {name!r} is already registered by {other!r}")
    )
    return True


def load_catalog(sandbox: Sandbox | None = None, timeout: float = LIST_TIME) -> Catalog:
    """Ask every ``arena.bots`` plugin, each in its own host process (all at once), what it
    registers."""
    sandbox = sandbox if sandbox is not None else choose_sandbox()
    plugins = plugin_entry_points()
    procs = []
    for plugin in plugins:
        argv = [sys.executable, "-m", "arena.host", "--plugin", plugin.name, "--list"]
        procs.append(
            subprocess.Popen(
                sandbox.command(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=sandbox.environment(),
                cwd=sandbox.working_directory(),
            )
        )
    catalog = Catalog()
    deadline = time.monotonic() + timeout
    for plugin, proc in zip(plugins, procs, strict=True):
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            catalog.errors.append(_listing_error(plugin, f"no answer within {timeout:g} s"))
            continue
        try:
            listing = P.decode(out.splitlines()[0] if out else b"")
        except P.ProtocolError:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            catalog.errors.append(
                _listing_error(plugin, f"host exited with code {proc.returncode}: {tail[0]}")
            )
            continue
        if listing.get("error"):
            catalog.errors.append(_listing_error(plugin, str(listing["error"])))
        for deck_set in listing.get("deck_sets", []):
            name = str(deck_set["name"])
            if _taken(catalog, plugin, "deck set", name, catalog.deck_sets):
                continue
            catalog.deck_sets[name] = DeckSetEntry(
                name, str(deck_set.get("description", "")), dict(deck_set["decks"]), plugin.name
            )
        for bot in listing.get("bots", []):
            name = str(bot["name"])
            if _taken(catalog, plugin, "bot", name, catalog.bots):
                continue
            catalog.bots[name] = BotEntry(
                name,
                str(bot.get("description", "")),
                dict(bot.get("params", {})),
                plugin.name,
                plugin.distribution,
                plugin.version,
                tuple(str(v) for v in bot.get("variants", ("classic", "huibers"))),
                tuple(int(p) for p in bot.get("players", (2, 3, 4))),
            )
    return catalog
