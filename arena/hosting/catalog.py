"""The bots installed here, as the referee's process knows them: without importing any of them.

Entry-point metadata names the plugins; each plugin is asked, in its own sandboxed host process
(``python -m arena.hosting.host --plugin DISTRIBUTION:ENTRY_POINT --list``), which bots it registers
with which parameters. Names are then settled by the ownership rule of :mod:`arena.hosting.names`
(the arena's own bots first; a name two third-party distributions claim belongs to neither). A
plugin that fails to import, hangs, crashes, answers nonsense or registers more than
:class:`ListingLimits` allow is listed with its error (one line), and so is every refused claim;
the others still work.

Whatever a plugin says is data: its descriptions, parameters and deck sets are held as sent
(checked against the limits: exact in ``arena bots --json``, where the JSON encoder escapes
control characters) and made :func:`~arena.errors.printable` wherever they are printed as text; a
plugin's error is made printable, on one line, when the catalog records it. Each answer, or
failure to answer, is remembered by the content of the plugin's package
(:mod:`arena.hosting.listing_cache`), so a slow or hanging register hook costs its time once,
not on every command.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from arena.botspec import BotSpec, ParamRule, declare_params, format_value, unknown_bot
from arena.errors import UnknownBotError, printable
from arena.hosting import protocol as P
from arena.hosting.listing_cache import ListingCache, Remembered, listing_key
from arena.hosting.names import Claim, canonical, check_name, one_line, settle
from arena.hosting.plugins import (
    PluginError,
    PluginInfo,
    claimed_players,
    claimed_variants,
    plugin_entry_points,
    plugin_ref,
    refusal_errors,
    refused_bot,
)
from arena.hosting.sandbox import HostProcess, Limits, Sandbox, SandboxError, choose_sandbox
from arena.hosting.submissions import REF_PREFIX, Record, Store, submission_ref

#: Seconds a plugin may take to describe itself (read when the catalog is loaded).
LIST_TIME = 60.0
#: How much of a listing host's standard error is kept for the error message.
LOG_BYTES = 64 << 10


@dataclass(frozen=True)
class ListingLimits:
    """What a plugin may register: the limits the catalog holds every listing to.

    A plugin that goes over one is listed as failed, with one line naming the limit (``registers
    10000 bots; at most 200 per package``); the rest of the catalog loads. Counts are per
    package: the bots (or deck sets) of all the plugins of one distribution together. Lengths
    are in characters, the listing in bytes.
    """

    #: Bots one package registers.
    bots: int = 200
    #: Deck sets one package registers.
    deck_sets: int = 50
    #: A bot's or deck set's description.
    description: int = 200
    #: Parameters of one bot.
    params: int = 32
    #: A parameter's name.
    param_name: int = 64
    #: A parameter's default, written out (a string's length; numbers are short).
    param_value: int = 256
    #: A plugin's whole listing, its deck sets included.
    listing_bytes: int = 16 << 20
    #: An entry-point name, distribution name or version, from the package's metadata.
    metadata: int = 100
    #: A plugin's error message: a longer one is cut, not refused.
    error: int = 1000


#: The limits in force.
LIMITS = ListingLimits()


class ListingLimitError(ValueError):
    """A listing that goes over one of the :class:`ListingLimits` (the message names it)."""


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
    #: The submissions store the catalog read (for ``NAME@VERSION``).
    store: Store | None = field(default=None, repr=False)

    def resolve(self, text: str | BotSpec) -> tuple[BotSpec, BotEntry]:
        """The canonical spec and the entry of a bot named ``NAME[param=value,...]``; raises
        :class:`~arena.errors.UnknownBotError` for an unknown or contested bot or a bad
        parameter. ``NAME@VERSION[...]`` names version ``VERSION`` of a submitted bot (not
        withdrawn) instead of its latest; the canonical spec is then ``NAME[...]``, its entry's
        plugin names that version's snapshot."""
        if isinstance(text, str) and (pinned := _PINNED.match(text)):
            return self._resolve_pinned(pinned.group(1), int(pinned.group(2)), pinned.group(3))
        spec = BotSpec.parse(text) if isinstance(text, str) else text
        entry = self.bots.get(spec.name)
        if entry is None:
            raise refused_bot(spec.name, self.contested) or unknown_bot(
                spec.name, self.bots, [e.plugin for e in self.errors]
            )
        return spec.resolve(entry.params, entry.rules), entry

    def resolve_played(self, name: str, plugin: str) -> tuple[BotSpec, BotEntry]:
        """As :meth:`resolve`, for a stored entrant ``name`` that played ``plugin``: a submitted
        plugin (``@SHA256:ENTRY_POINT``) gives the version it played, not the latest (a
        tournament goes on with the code it started with); any other, the bot here now."""
        if plugin.startswith(REF_PREFIX):
            content = plugin[1:].partition(":")[0]
            store = self.store if self.store is not None else Store()
            base, bracket, rest = name.partition("[")
            for record in store.records():
                if record.content == content and canonical(base) in map(canonical, record.bots):
                    return self.resolve(f"{base}@{record.version}{bracket}{rest}")
        return self.resolve(BotSpec.parse(name))

    def _resolve_pinned(self, name: str, version: int, rest: str) -> tuple[BotSpec, BotEntry]:
        store = self.store if self.store is not None else Store()
        owner = self.bots.get(name)
        for record in store.records():
            if canonical(name) not in {canonical(b) for b in record.bots}:
                continue
            if owner is not None and canonical(owner.distribution) != canonical(
                record.distribution
            ):
                continue  # the name belongs to another distribution now
            if record.version != version:
                continue
            if record.withdrawn:
                raise UnknownBotError(
                    f"bot {name!r} version {version} ({record.distribution}) is withdrawn"
                )
            for plugin, listing, _ in _record_plugins(record):
                for claim in listing_claims(plugin, listing)[0]:
                    if canonical(claim.name) == canonical(name):
                        spec = BotSpec.parse(claim.name + rest)
                        return spec.resolve(claim.item.params, claim.item.rules), claim.item
        raise UnknownBotError(f"no submitted bot {name!r} of version {version}")


#: ``NAME@VERSION`` with parameters or not.
_PINNED = re.compile(r"^\s*([A-Za-z_][\w.-]*)@(\d+)\s*((?:\[.*\])?)\s*$")


def _read_listing(
    proc: subprocess.Popen[bytes], deadline: float, timeout: float
) -> tuple[bytes, bytes, str | None]:
    """The first line a listing host writes (at most ``LIMITS.listing_bytes``) and the last
    :data:`LOG_BYTES` of its standard error, read until that line ends, the host closes its
    output, or ``deadline``; with a line on what went wrong (``None`` if nothing did).

    Hosts are asked all at once and share one deadline, so past it what a host has written
    already is still read (not its standard error, and no waiting): a host read last, after
    one that hung, is not failed for the other's time."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    stdout, stderr = proc.stdout.fileno(), proc.stderr.fileno()
    streams = {stdout: out, stderr: err}
    late = False
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0 and not late:
                late = True
                if stderr in selector.get_map():
                    selector.unregister(stderr)
                    continue
            events = selector.select(max(remaining, 0.0))
            if late and not events:
                return (
                    bytes(out),
                    bytes(err),
                    f"no listing within {timeout:g} s (its register hooks did not finish)",
                )
            for key, _ in events:
                data = os.read(key.fd, 65536)
                if not data:
                    selector.unregister(key.fd)
                    continue
                buffer = streams[key.fd]
                buffer += data
                if key.fd == stderr and len(buffer) > LOG_BYTES:
                    del buffer[: len(buffer) - LOG_BYTES]
                if key.fd == stdout and b"\n" in data:
                    return bytes(out).split(b"\n", 1)[0], bytes(err), None
            if len(out) > LIMITS.listing_bytes:
                return (
                    b"",
                    bytes(err),
                    f"sends a listing longer than {LIMITS.listing_bytes >> 20} MiB; at most "
                    f"{LIMITS.listing_bytes >> 20} MiB per plugin",
                )
    return bytes(out), bytes(err), None


def host_listing(
    proc: subprocess.Popen[bytes], deadline: float, timeout: float
) -> tuple[dict[str, Any] | None, str | None]:
    """The listing ``proc`` (a host run with ``--list``) sends, or ``None`` and what went
    wrong, as it happened: no answer in time, a listing too long, a host that exited without
    one (with the last line it wrote on standard error, if any), or a line that is not a
    listing."""
    out, err, problem = _read_listing(proc, deadline, timeout)
    if problem is not None:
        return None, problem
    if not out.strip():
        try:
            code: int | None = proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:]
        said = f"; its last output: {tail[0]}" if tail else " and wrote nothing else"
        how = "closed its output" if code is None else f"exited with code {code}"
        return None, f"its host {how} without sending a listing{said}"
    try:
        listing = P.decode(out, LIMITS.listing_bytes)
    except P.ProtocolError as exc:
        return None, f"its host sent something that is not a listing: {exc}"
    if listing.get("type") != P.LISTING:
        return None, f"its host sent a {P.describe(listing.get('type'))} message, not a listing"
    return listing, None


def _listing_error(plugin: PluginInfo, message: str) -> PluginError:
    """A plugin's failure as one printable line (:func:`~arena.errors.printable`), cut to
    ``LIMITS.error`` characters."""
    return PluginError(
        printable(plugin.name, LIMITS.metadata),
        printable(plugin.distribution, LIMITS.metadata),
        printable(one_line(message), LIMITS.error),
    )


_PARAM_TYPES = (bool, int, float, str)


def _description(what: str, text: Any) -> str:
    """A registered description, as sent; :class:`ListingLimitError` if it is longer than
    ``LIMITS.description`` characters."""
    text = str(text)
    if len(text) > LIMITS.description:
        raise ListingLimitError(
            f"{what} has a description of {len(text)} characters; at most {LIMITS.description}"
        )
    return text


def _check_params(name: str, params: dict[str, Any]) -> None:
    """:class:`ListingLimitError` if bot ``name``'s parameters go over a limit."""
    if len(params) > LIMITS.params:
        raise ListingLimitError(
            f"bot {name!r} has {len(params)} parameters; at most {LIMITS.params} per bot"
        )
    for key, value in params.items():
        if len(key) > LIMITS.param_name:
            raise ListingLimitError(
                f"bot {name!r} has a parameter name of {len(key)} characters; at most "
                f"{LIMITS.param_name}"
            )
        if len(format_value(value)) > LIMITS.param_value:
            raise ListingLimitError(
                f"bot {name!r}, parameter {key!r}: a default of "
                f"{len(format_value(value))} characters; at most {LIMITS.param_value}"
            )


def _bot_entry(plugin: PluginInfo, bot: dict[str, Any]) -> BotEntry:
    """The entry a listing describes; :class:`ListingLimitError` if it goes over a limit,
    KeyError, TypeError or ValueError if it is malformed."""
    name = check_name("bot", bot["name"])
    params = bot.get("params", {})
    if not isinstance(params, dict) or not all(
        isinstance(k, str) and isinstance(v, _PARAM_TYPES) for k, v in params.items()
    ):
        raise TypeError(f"parameters {str(params)[:80]} are not names with simple defaults")
    _check_params(name, params)
    description = _description(f"bot {name!r}", bot.get("description", ""))
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
    # what it plays, checked as a registration is (a host's listing may say anything)
    variants, players = bot.get("variants"), bot.get("players")
    return BotEntry(
        name,
        description,
        dict(params),
        plugin.name,
        plugin.distribution,
        plugin.version,
        claimed_variants(name, variants if variants is None else list(variants)),
        claimed_players(name, players if players is None else [int(p) for p in players]),
        inferred,
    )


def _deck_set_entry(plugin: PluginInfo, deck_set: dict[str, Any]) -> DeckSetEntry:
    """The deck set a listing describes; :class:`ListingLimitError` if it goes over a limit,
    KeyError, TypeError or ValueError if it is malformed."""
    name = check_name("deck set", deck_set["name"])
    decks = deck_set["decks"]
    if not isinstance(decks, dict):
        raise TypeError("decks are not a mapping of variant to decks")
    return DeckSetEntry(
        name,
        _description(f"deck set {name!r}", deck_set.get("description", "")),
        dict(decks),
        plugin.name,
    )


def _items(listing: dict[str, Any], key: str) -> list[Any]:
    items = listing.get(key) or []
    if not isinstance(items, list):
        raise TypeError(f"{key} are not a list")
    return items


def listing_claims(
    plugin: PluginInfo, listing: dict[str, Any], earlier: tuple[int, int] = (0, 0)
) -> tuple[list[Claim[BotEntry]], list[Claim[DeckSetEntry]]]:
    """What a plugin's listing claims, given how many bots and deck sets the earlier plugins of
    its package claimed; :class:`ListingLimitError` if it goes over a limit, KeyError,
    TypeError or ValueError if it is malformed."""
    listed_bots, listed_decks = _items(listing, "bots"), _items(listing, "deck_sets")
    for what, count, before, limit in (
        ("bots", len(listed_bots), earlier[0], LIMITS.bots),
        ("deck sets", len(listed_decks), earlier[1], LIMITS.deck_sets),
    ):
        if before + count > limit:
            together = f" ({before + count} with its package's other plugins)" if before else ""
            raise ListingLimitError(
                f"registers {count} {what}{together}; at most {limit} per package"
            )
    bots = [_bot_entry(plugin, bot) for bot in listed_bots]
    decks = [_deck_set_entry(plugin, deck_set) for deck_set in listed_decks]
    return (
        [Claim(b.name, plugin.name, plugin.distribution, b) for b in bots],
        [Claim(d.name, plugin.name, plugin.distribution, d) for d in decks],
    )


def _metadata_problem(plugin: PluginInfo) -> str | None:
    """Why ``plugin``'s metadata (entry-point name, distribution, version) cannot be shown
    and stored as it is, or ``None``: each must be printable and at most ``LIMITS.metadata``
    characters."""
    for what, text in (
        ("entry-point name", plugin.name),
        ("distribution name", plugin.distribution),
        ("version", plugin.version),
    ):
        if not text.isprintable() or len(text) > LIMITS.metadata:
            return (
                f"not listed: its {what} {text[: LIMITS.metadata]!r} is not "
                f"{LIMITS.metadata} printable characters at most"
            )
    return None


#: Added to a failure that was remembered rather than seen now.
REMEMBERED_NOTE = " (remembered until the package changes; arena bots --refresh asks again)"


def _submitted_plugins(store: Store) -> list[tuple[PluginInfo, dict[str, Any], Record]]:
    """The plugins of the submissions that play by default (each distribution's latest version
    not withdrawn), with the listing each sent when it was submitted."""
    return [item for record in store.playing() for item in _record_plugins(record)]


def _record_plugins(record: Record) -> list[tuple[PluginInfo, dict[str, Any], Record]]:
    """The plugins of one submitted version, with their listings."""
    out = []
    for entry_point, plugin in sorted(record.plugins.items()):
        info = PluginInfo(
            submission_ref(record.content, entry_point),
            str(plugin.get("value", "")),
            record.distribution,
            f"{record.package_version} (submission {record.version})",
        )
        out.append((info, plugin.get("listing") or {}, record))
    return out


def load_catalog(
    sandbox: Sandbox | None = None,
    timeout: float | None = None,
    refresh: bool = False,
    store: Store | None = None,
) -> Catalog:
    """Ask every ``arena.bots`` plugin, each in its own host process (all at once), what it
    registers, and settle who owns which name.

    Plugins are asked under ``sandbox`` with its default limits
    (:class:`~arena.hosting.sandbox.Limits`), whatever limits it has for play: a bot that cannot
    start under the limits of a game (a ``--memory-mb`` too small) is then a known bot whose start
    is a recorded fault, not an unknown one. Each has ``timeout`` seconds (default
    :data:`LIST_TIME`) to answer. An answer, or the failure to give one, is remembered by the
    content of the plugin's package (:mod:`arena.hosting.listing_cache`) and not asked again
    until that changes, unless ``refresh``.

    The submissions of ``store`` (default: :func:`arena.hosting.submissions.root`) join after
    the installed plugins: each distribution's latest version not withdrawn, with what it said
    it registers when it was submitted (asked then, in a sandboxed host of its snapshot)."""
    sandbox = sandbox if sandbox is not None else choose_sandbox()
    sandbox = replace(sandbox, limits=Limits())
    timeout = LIST_TIME if timeout is None else timeout
    settings = {
        "sandbox": sandbox.kind,
        "timeout": timeout,
        "limits": asdict(LIMITS),
        "path": os.environ.get("PYTHONPATH", ""),  # what a host can import besides its package
    }
    cache = ListingCache()
    catalog = Catalog()
    asked: list[tuple[PluginInfo, str | None, Remembered | None]] = []
    for plugin in plugin_entry_points():
        problem = _metadata_problem(plugin)
        if problem is not None:
            catalog.errors.append(_listing_error(plugin, problem))
            continue
        try:
            sandbox.check(plugin.ref, plugin.distribution)
        except SandboxError as exc:  # third-party code is not run without the sandbox
            catalog.errors.append(_listing_error(plugin, f"not listed: {exc}"))
            continue
        key = listing_key(plugin, settings)
        remembered = cache.get(key) if key is not None and not refresh else None
        asked.append((plugin, key, remembered))
    bots: list[Claim[BotEntry]] = []
    deck_sets: list[Claim[DeckSetEntry]] = []
    counted: dict[str, tuple[int, int]] = {}  # package -> bots, deck sets claimed so far

    def take(
        package: str, claimed: tuple[list[Claim[BotEntry]], list[Claim[DeckSetEntry]]]
    ) -> None:
        bots.extend(claimed[0])
        deck_sets.extend(claimed[1])
        before = counted.get(package, (0, 0))
        counted[package] = (before[0] + len(claimed[0]), before[1] + len(claimed[1]))

    hosts: dict[int, HostProcess] = {}
    try:
        for index, (plugin, _, remembered) in enumerate(asked):
            if remembered is None:
                argv = [sys.executable, "-m", "arena.hosting.host", "--plugin", plugin.ref]
                binds = sandbox.own(plugin.ref) if sandbox.isolated else []
                hosts[index] = sandbox.launch([*argv, "--list"], binds)
        deadline = time.monotonic() + timeout
        for index, (plugin, key, remembered) in enumerate(asked):
            if remembered is None:
                listing, failure = host_listing(hosts[index].process, deadline, timeout)
                answer, note = Remembered(listing, failure), ""
            else:
                answer, note = remembered, REMEMBERED_NOTE
            package = canonical(plugin.distribution) or f"plugin {plugin.name}"
            claimed = None
            if answer.listing is not None:
                try:
                    claimed = listing_claims(plugin, answer.listing, counted.get(package, (0, 0)))
                except ListingLimitError as exc:
                    answer = Remembered(failure=str(exc))
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    answer = Remembered(failure=f"malformed listing: {type(exc).__name__}: {exc}")
            if key is not None and remembered is None:
                cache.put(key, plugin, answer)
            if claimed is None:
                catalog.errors.append(_listing_error(plugin, f"{answer.failure}{note}"))
                continue
            assert answer.listing is not None
            if answer.listing.get("error"):
                catalog.errors.append(_listing_error(plugin, str(answer.listing["error"])))
            take(package, claimed)
    finally:  # also on Ctrl-C: no listing host is left behind, nor its pipes
        for host in hosts.values():
            host.close()
            for stream in (host.process.stdin, host.process.stdout, host.process.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
    catalog.store = store if store is not None else Store()
    for plugin, listing, _ in _submitted_plugins(catalog.store):
        try:
            sandbox.check(plugin.ref, plugin.distribution)
        except SandboxError as exc:
            catalog.errors.append(_listing_error(plugin, f"not listed: {exc}"))
            continue
        package = canonical(plugin.distribution)
        try:
            claimed = listing_claims(plugin, listing, counted.get(package, (0, 0)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            catalog.errors.append(_listing_error(plugin, f"malformed listing: {exc}"))
            continue
        take(package, claimed)
    owned_bots, owned_decks = settle("bot", bots), settle("deck set", deck_sets)
    catalog.bots, catalog.contested = owned_bots.owned, owned_bots.contested
    catalog.deck_sets = owned_decks.owned
    catalog.errors += refusal_errors(owned_bots, owned_decks)
    return catalog
