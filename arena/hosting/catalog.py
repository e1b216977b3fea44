"""The bots installed here, as the referee's process knows them: without importing any of them.

Entry-point metadata names the plugins; each plugin is asked, in its own sandboxed host process
(``python -m arena.hosting.host --plugin DISTRIBUTION:ENTRY_POINT --list``), which bots it registers
with which parameters. Names are then settled by the ownership rule of :mod:`arena.hosting.names`
(the arena's own bots first; a name two third-party distributions claim belongs to neither). A
plugin that fails to import, hangs, crashes or answers nonsense is listed with its error, and so is
every refused claim; the others still work.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any

from arena.botspec import BotSpec, ParamRule, declare_params, format_value, unknown_bot
from arena.hosting import protocol as P
from arena.hosting.names import Claim, check_name, one_line, settle
from arena.hosting.plugins import (
    PluginError,
    PluginInfo,
    plugin_entry_points,
    plugin_ref,
    refusal_errors,
    refused_bot,
)
from arena.hosting.sandbox import HostProcess, Limits, Sandbox, SandboxError, choose_sandbox

#: Seconds a plugin may take to describe itself.
LIST_TIME = 60.0
#: Longest listing a plugin may send (its deck sets included), and how much of its standard
#: error is kept for the error message.
LISTING_BYTES = 16 << 20
LOG_BYTES = 64 << 10


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
    #: Each parameter's type and bounds (see :func:`arena.botspec.declare_params`).
    rules: dict[str, ParamRule] = field(default_factory=dict)

    @property
    def plugin_ref(self) -> str:
        """What a host is given to load this bot's plugin (see
        :func:`arena.hosting.plugins.plugin_ref`)."""
        return plugin_ref(self.distribution, self.plugin)

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
            "rules": {key: rule.to_json() for key, rule in self.rules.items()},
        }

    def describe_params(self) -> str:
        """The parameters in one line: ``iterations=1000 (an int >= 1), c=0.7 (...)``."""
        return ", ".join(
            f"{key}={format_value(value)} ({self.rules[key].allowed()})"
            if key in self.rules
            else f"{key}={format_value(value)}"
            for key, value in self.params.items()
        )


@dataclass(frozen=True)
class DeckSetEntry:
    """A deck set a plugin contributes: its decks (card values, top first) per variant."""

    name: str
    description: str
    decks: dict[str, list[list[int]]] = field(repr=False)
    plugin: str


@dataclass
class Catalog:
    """Every bot and plugin deck set found, by name (each name owned by one distribution), and
    every plugin that failed or claimed a name it does not own."""

    bots: dict[str, BotEntry] = field(default_factory=dict)
    deck_sets: dict[str, DeckSetEntry] = field(default_factory=dict)
    errors: list[PluginError] = field(default_factory=list)
    #: Bot names several distributions claim, which none may use: name -> why (one line).
    contested: dict[str, str] = field(default_factory=dict)

    def resolve(self, text: str | BotSpec) -> tuple[BotSpec, BotEntry]:
        """The canonical spec and the entry of a bot named ``NAME[param=value,...]``; raises
        :class:`~arena.errors.UnknownBotError` for an unknown or contested bot or a bad
        parameter."""
        spec = BotSpec.parse(text) if isinstance(text, str) else text
        entry = self.bots.get(spec.name)
        if entry is None:
            raise refused_bot(spec.name, self.contested) or unknown_bot(
                spec.name, self.bots, [e.plugin for e in self.errors]
            )
        return spec.resolve(entry.params, entry.rules), entry


def _read_listing(
    proc: subprocess.Popen[bytes], deadline: float, timeout: float
) -> tuple[bytes, bytes, str | None]:
    """The first line a listing host writes (at most :data:`LISTING_BYTES`) and the last
    :data:`LOG_BYTES` of its standard error, read until that line ends, the host closes its
    output, or ``deadline``; with a line on what went wrong (``None`` if nothing did)."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map() and b"\n" not in out:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(out), bytes(err), f"no answer within {timeout:g} s"
            for key, _ in selector.select(remaining):
                data = os.read(key.fd, 65536)
                if not data:
                    selector.unregister(key.fd)
                    continue
                buffer = streams[key.fd]
                buffer += data
                if key.fd == proc.stderr.fileno() and len(buffer) > LOG_BYTES:
                    del buffer[: len(buffer) - LOG_BYTES]
            if len(out) > LISTING_BYTES:
                return b"", bytes(err), f"listing longer than {LISTING_BYTES >> 20} MiB"
    return bytes(out).split(b"\n", 1)[0], bytes(err), None


def _listing(
    plugin: PluginInfo,
    proc: subprocess.Popen[bytes],
    deadline: float,
    timeout: float,
    catalog: Catalog,
) -> dict[str, Any] | None:
    """The listing ``proc`` (a host run with ``--list``) sends, or ``None`` with the reason
    added to ``catalog.errors``."""
    out, err, problem = _read_listing(proc, deadline, timeout)
    if problem is None:
        try:
            listing = P.decode(out)
        except P.ProtocolError:
            try:
                code: int | str = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = "none (it sent no listing)"
            tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            problem = f"host exited with code {code}: {tail[0]}"
    if problem is not None:
        catalog.errors.append(_listing_error(plugin, problem))
        return None
    if listing.get("error"):
        catalog.errors.append(_listing_error(plugin, str(listing["error"])))
    return listing


def _listing_error(plugin: PluginInfo, message: str) -> PluginError:
    return PluginError(plugin.name, plugin.distribution, one_line(message))


_PARAM_TYPES = (bool, int, float, str)


def _bot_entry(plugin: PluginInfo, bot: dict[str, Any]) -> BotEntry:
    """The entry a listing describes; KeyError, TypeError or ValueError if it is malformed."""
    params = bot.get("params", {})
    if not isinstance(params, dict) or not all(
        isinstance(k, str) and isinstance(v, _PARAM_TYPES) for k, v in params.items()
    ):
        raise TypeError(f"parameters {str(params)[:80]} are not names with simple defaults")
    name = check_name("bot", bot["name"])
    rules = bot.get("rules", {})
    if not isinstance(rules, dict):
        raise TypeError(f"parameter rules {str(rules)[:80]} are not a mapping")
    declared = {key: ParamRule.from_json(rule) for key, rule in rules.items()}
    # the listing's rules must be a declaration of these defaults (checked the same way)
    inferred = declare_params(
        name,
        params,
        {k: (r.low, r.high) for k, r in declared.items()},
        {k: r.kind for k, r in declared.items()},
    )
    return BotEntry(
        name,
        str(bot.get("description", "")),
        dict(params),
        plugin.name,
        plugin.distribution,
        plugin.version,
        tuple(str(v) for v in bot.get("variants", ("classic", "huibers"))),
        tuple(int(p) for p in bot.get("players", (2, 3, 4))),
        inferred,
    )


def _deck_set_entry(plugin: PluginInfo, deck_set: dict[str, Any]) -> DeckSetEntry:
    """The deck set a listing describes; KeyError, TypeError or ValueError if it is malformed."""
    decks = deck_set["decks"]
    if not isinstance(decks, dict):
        raise TypeError("decks are not a mapping of variant to decks")
    return DeckSetEntry(
        check_name("deck set", deck_set["name"]),
        str(deck_set.get("description", "")),
        dict(decks),
        plugin.name,
    )


def _claims(
    plugin: PluginInfo, listing: dict[str, Any]
) -> tuple[list[Claim[BotEntry]], list[Claim[DeckSetEntry]]]:
    """What a plugin's listing claims; KeyError, TypeError or ValueError if it is malformed."""
    bots = [_bot_entry(plugin, bot) for bot in listing.get("bots", [])]
    decks = [_deck_set_entry(plugin, deck_set) for deck_set in listing.get("deck_sets", [])]
    return (
        [Claim(b.name, plugin.name, plugin.distribution, b) for b in bots],
        [Claim(d.name, plugin.name, plugin.distribution, d) for d in decks],
    )


def load_catalog(sandbox: Sandbox | None = None, timeout: float = LIST_TIME) -> Catalog:
    """Ask every ``arena.bots`` plugin, each in its own host process (all at once), what it
    registers, and settle who owns which name.

    Plugins are asked under ``sandbox`` with its default limits
    (:class:`~arena.hosting.sandbox.Limits`), whatever limits it has for play: a bot that cannot
    start under the limits of a game (a ``--memory-mb`` too small) is then a known bot whose start
    is a recorded fault, not an unknown one."""
    sandbox = sandbox if sandbox is not None else choose_sandbox()
    sandbox = replace(sandbox, limits=Limits())
    catalog = Catalog()
    plugins = []
    for plugin in plugin_entry_points():
        try:
            sandbox.check(plugin.ref, plugin.distribution)
        except SandboxError as exc:  # third-party code is not run without the sandbox
            catalog.errors.append(_listing_error(plugin, f"not listed: {exc}"))
            continue
        plugins.append(plugin)
    bots: list[Claim[BotEntry]] = []
    deck_sets: list[Claim[DeckSetEntry]] = []
    hosts: list[HostProcess] = []
    try:
        for plugin in plugins:
            argv = [sys.executable, "-m", "arena.hosting.host", "--plugin", plugin.ref, "--list"]
            hosts.append(sandbox.launch(argv))
        deadline = time.monotonic() + timeout
        for plugin, host in zip(plugins, hosts, strict=True):
            listing = _listing(plugin, host.process, deadline, timeout, catalog)
            if listing is None:
                continue
            try:
                claimed_bots, claimed_decks = _claims(plugin, listing)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                catalog.errors.append(
                    _listing_error(plugin, f"malformed listing: {type(exc).__name__}: {exc}")
                )
                continue
            bots += claimed_bots
            deck_sets += claimed_decks
    finally:  # also on Ctrl-C: no listing host is left behind
        for host in hosts:
            host.close()
    owned_bots, owned_decks = settle("bot", bots), settle("deck set", deck_sets)
    catalog.bots, catalog.contested = owned_bots.owned, owned_bots.contested
    catalog.deck_sets = owned_decks.owned
    catalog.errors += refusal_errors(owned_bots, owned_decks)
    return catalog
