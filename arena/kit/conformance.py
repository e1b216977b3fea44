"""The conformance run behind ``arena check BOT``: what a bot author runs before submitting.

:func:`run_checks` plays the bot, in its own (sandboxed) host process exactly as a tournament
would, against the ``uniform`` reference bot, and reports a list of separate checks:

- ``claims``: the variants and player counts the bot says it plays include at least one that
  exists (combinations a variant does not allow, such as ``huibers`` with 3 players, are skipped);
- ``play VARIANT, N players`` (one per claimed combination): random rounds, the bot's seat
  rotating so that it plays every seat, in which every answer must be a legal action given in
  time; any fault of the bot (timeout, crash, exited, malformed, illegal, protocol) fails it;
- ``determinism``: a few fault-free rounds of each combination, replayed with the same seeds by
  a fresh host process, give the same records (all but the times);
- ``whole match``: a match (rounds until one seat has enough tokens) without a fault, in
  ``classic`` with 2 players if claimed, else in the first claimed combination (skipped when the
  ``play`` check of that combination failed already);
- ``time per move``: mean and maximum (worst) time of the bot's answers; a warning, never a
  failure, when the worst is within :data:`WARN_SHARE` of the limit (the limit itself is
  enforced by the ``play`` checks).

Every failure names the variant and player count, the round's seed and the bot's seat, the fault
kind and message, how many actions had been played, and an ``arena play`` command that replays
the round.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.errors import ArenaError, UnknownVariantError
from arena.game import Variant
from arena.hosting.catalog import BotEntry, Catalog
from arena.hosting.hosted import HostHandle
from arena.hosting.sandbox import Sandbox
from arena.referee.play import BotHandle, Referee, Turn
from arena.referee.records import Fault, GameRecord
from arena.seeds import derive_seed
from arena.tournament.progress import format_time

#: The reference bot the bot under test plays against.
OPPONENT = "uniform"
#: A combination stops after this many rounds with a fault of the bot (it has failed already;
#: a bot that breaks on every move would otherwise cost a host restart per round).
MAX_FAULTY_ROUNDS = 5
#: Faults listed in a failed check's detail.
FAULTS_LISTED = 3
#: Fault-free rounds per combination replayed by the determinism check.
DETERMINISM_ROUNDS = 3
#: The combination the whole-match check prefers.
MATCH_COMBINATION = ("classic", 2)
#: Move time limit the CLI uses when ``--move-time`` is not given (replay commands omit it).
DEFAULT_MOVE_TIME = 1.0
#: ``time per move`` warns when the worst move took more than this share of the limit (within
#: 20% of it): a slower or busier machine than the author's may then make it a timeout.
WARN_SHARE = 0.8


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: its name, whether it passed, and a readable detail.

    ``detail`` may span several lines (the first is a summary). ``warnings`` are remarks that do
    not fail the check; ``skipped`` marks a check that could not be judged (it then counts as
    passed, and says why in ``detail``). ``data`` holds the figures behind the detail for
    machine readers.
    """

    name: str
    passed: bool
    detail: str
    warnings: tuple[str, ...] = ()
    skipped: bool = False
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``FAIL``, ``SKIP``, ``WARN`` or ``PASS``."""
        if not self.passed:
            return "FAIL"
        if self.skipped:
            return "SKIP"
        return "WARN" if self.warnings else "PASS"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "passed": self.passed,
            "status": self.status.lower(),
            "detail": self.detail,
            "warnings": list(self.warnings),
            "data": dict(self.data),
        }


@dataclass
class CheckReport:
    """Every check of one conformance run of ``bot`` (its canonical spec), with the settings
    the run used and how long it took."""

    bot: str
    entry: BotEntry
    settings: dict[str, Any]
    checks: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """Whether there was at least one check and none failed."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]

    @property
    def warnings(self) -> list[str]:
        """Every warning of every check."""
        return [w for c in self.checks for w in c.warnings]

    def lines(self) -> list[str]:
        """The report as readable lines: a header, one status line per check with its detail
        indented below, and a verdict."""
        origin = f"{self.entry.distribution} {self.entry.version}".strip()
        origin = f", {origin}" if origin else ""
        s = self.settings
        out = [
            f"arena check {self.bot} (plugin {self.entry.plugin!r}{origin})",
            f"{s['rounds']} rounds per combination, seed {s['seed']}, "
            f"move time {s['move_time']:g} s, memory {s['memory_mb']} MiB, "
            f"sandbox {s['sandbox']}",
        ]
        for check in self.checks:
            first, *rest = check.detail.splitlines() or [""]
            out.append(f"{check.status:<5} {check.name}: {first}")
            out.extend(f"        {line}" for line in rest)
            out.extend(f"        warning: {w}" for w in check.warnings)
        failed = len(self.failures)
        warned = len(self.warnings)
        extra = f", {warned} warning{'s' if warned != 1 else ''}" if warned else ""
        if self.passed:
            verdict = f"passed: all {len(self.checks)} checks{extra}"
        else:
            verdict = f"FAILED: {failed} of {len(self.checks)} checks{extra}"
        out.append(f"{verdict} ({self.seconds:.1f} s)")
        return out

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: the bot, the settings, the verdict and every check."""
        return {
            "bot": self.bot,
            "plugin": self.entry.plugin,
            "distribution": self.entry.distribution,
            "version": self.entry.version,
            "settings": dict(self.settings),
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "checks": [c.to_json() for c in self.checks],
        }


@dataclass(frozen=True)
class Combination:
    """A variant and a player count the bot claims."""

    variant: str
    players: int

    def __str__(self) -> str:
        return f"{self.variant}, {self.players} players"


class _Clock:
    """Time of each answer of the bot under test: count, total, and the slowest with where."""

    def __init__(self) -> None:
        self.moves = 0
        self.total = 0.0
        self.max = 0.0
        self.max_where = ""
        self.where = ""

    def add(self, seconds: float) -> None:
        self.moves += 1
        self.total += seconds
        if seconds > self.max:
            self.max = seconds
            self.max_where = self.where


class _TimedHandle(BotHandle):
    """Passes everything to ``inner`` and times each answer it gives (the records only hold
    each seat's total time per round, so the slowest single move needs this)."""

    def __init__(self, inner: BotHandle, clock: _Clock) -> None:
        self.inner = inner
        self.clock = clock
        self.name = inner.name

    def start(self, seat: int, players: int, variant: str, seed: int) -> None:
        self.inner.start(seat, players, variant, seed)

    def act(self, turn: Turn, time_limit: float | None) -> Any:
        begun = time.perf_counter()
        answer = self.inner.act(turn, time_limit)
        self.clock.add(time.perf_counter() - begun)
        return answer

    def after_fault(self) -> None:
        self.inner.after_fault()

    def close(self) -> None:
        self.inner.close()


@dataclass
class _Faulty:
    """A round in which the bot under test had faults."""

    index: int
    seed: int
    seat: int
    seats: list[str]
    faults: list[Fault]


def _round_seed(seed: int, combo: Combination, index: int) -> int:
    return derive_seed(seed, "check", combo.variant, combo.players, index)


def _seating(bot: BotHandle, opponents: Sequence[BotHandle], seat: int, n: int) -> list[BotHandle]:
    others = list(opponents[: n - 1])
    return [*others[:seat], bot, *others[seat:]]


def _replay_command(
    seats: Sequence[str], variant: str, seed: int, move_time: float, sandbox: Sandbox
) -> str:
    args = ["arena", "play", *seats, "--variant", variant, "--seed", str(seed)]
    if move_time != DEFAULT_MOVE_TIME:
        args += ["--move-time", f"{move_time:g}"]
    if not sandbox.isolated:
        args += ["--sandbox", "none"]
    return shlex.join(args)


def _fault_line(fault: Fault) -> str:
    moves = f"{fault.move} action{'s' if fault.move != 1 else ''}"
    return f"{fault.kind} after {moves}: {fault.message}"


def _claimed(entry: BotEntry) -> tuple[list[Combination], list[str], list[str]]:
    """The playable combinations, the skipped ones (with why), and claims that are errors."""
    combos: list[Combination] = []
    skipped: list[str] = []
    errors: list[str] = []
    for name in entry.variants:
        try:
            variant = Variant.get(name)
        except UnknownVariantError as exc:
            errors.append(str(exc))
            continue
        for players in entry.players:
            if variant.min_players <= players <= variant.max_players:
                combos.append(Combination(variant.name, players))
            else:
                skipped.append(f"{variant.name} with {players} players (not in its rules)")
    return combos, skipped, errors


def _claims_check(entry: BotEntry) -> tuple[CheckResult, list[Combination]]:
    combos, skipped, errors = _claimed(entry)
    by_variant: dict[str, list[int]] = {}
    for combo in combos:
        by_variant.setdefault(combo.variant, []).append(combo.players)
    summary = (
        "; ".join(f"{v} {'/'.join(map(str, ps))} players" for v, ps in by_variant.items())
        or "nothing playable"
    )
    detail = [summary]
    if skipped:
        detail.append("skipped: " + ", ".join(skipped))
    detail.extend(f"error: {e}" for e in errors)
    if not combos:
        detail.append(
            f"the bot claims variants {', '.join(entry.variants) or 'none'} and player counts "
            f"{', '.join(map(str, entry.players)) or 'none'}: no combination can be played"
        )
    data = {
        "combinations": [[c.variant, c.players] for c in combos],
        "skipped": skipped,
        "errors": errors,
    }
    passed = bool(combos) and not errors
    return CheckResult("claims", passed, "\n".join(detail), data=data), combos


class _Run:
    """The state of one conformance run: settings, handles and what was recorded."""

    def __init__(
        self,
        spec: str,
        entry: BotEntry,
        opponent: BotEntry,
        sandbox: Sandbox,
        rounds: int,
        seed: int,
        move_time: float,
        memory_mb: int,
        progress: Callable[[str], None] | None,
    ) -> None:
        self.spec = spec
        self.entry = entry
        self.opponent = opponent
        self.sandbox = sandbox
        self.rounds = rounds
        self.seed = seed
        self.move_time = move_time
        self.memory_mb = memory_mb
        self.progress = progress
        self.clock = _Clock()
        self.handles: list[HostHandle] = []
        self.bot = _TimedHandle(self._bot_handle(), self.clock)
        self.opponents = [self._opponent_handle() for _ in range(3)]
        #: The bot's second host, for the determinism check (fresh: it plays nothing before).
        self.fresh = self._bot_handle()
        #: Fault-free rounds kept per combination for the determinism check.
        self.kept: dict[Combination, list[tuple[int, GameRecord]]] = {}

    def _bot_handle(self) -> HostHandle:
        handle = HostHandle(
            self.spec, self.entry.plugin_ref, sandbox=self.sandbox, memory_mb=self.memory_mb
        )
        self.handles.append(handle)
        return handle

    def _opponent_handle(self) -> HostHandle:
        handle = HostHandle(self.opponent.name, self.opponent.plugin_ref, sandbox=self.sandbox)
        self.handles.append(handle)
        return handle

    def close(self) -> None:
        for handle in self.handles:
            with contextlib.suppress(OSError):
                handle.close()

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    def replay(self, seats: Sequence[str], variant: str, seed: int) -> str:
        return _replay_command(seats, variant, seed, self.move_time, self.sandbox)

    # --- play ---------------------------------------------------------------------------------

    def play(self, combo: Combination) -> CheckResult:
        """``rounds`` random rounds of ``combo``, the bot's seat rotating."""
        self.say(f"checking {self.spec}: {combo}, {self.rounds} rounds")
        referee = Referee(combo.variant, move_time=self.move_time)
        n = combo.players
        played = bot_moves = 0
        faulty: list[_Faulty] = []
        opponent_faults: list[str] = []
        kept = self.kept.setdefault(combo, [])
        for index in range(self.rounds):
            seat = index % n
            seed = _round_seed(self.seed, combo, index)
            self.clock.where = f"{combo}, round {index} (seed {seed}, seat {seat})"
            record = referee.play_round(_seating(self.bot, self.opponents, seat, n), seed=seed)
            played += 1
            bot_moves += record.moves[seat]
            mine = [f for f in record.faults if f.seat == seat]
            opponent_faults.extend(
                f"round {index} seat {f.seat}: {_fault_line(f)}"
                for f in record.faults
                if f.seat != seat
            )
            if mine:
                faulty.append(_Faulty(index, seed, seat, record.seats, mine))
                if len(faulty) >= MAX_FAULTY_ROUNDS:
                    break
            elif not record.faults and len(kept) < DETERMINISM_ROUNDS:
                kept.append((seat, record))
        data: dict[str, Any] = {
            "variant": combo.variant,
            "players": n,
            "rounds": played,
            "moves": bot_moves,
            "faulty_rounds": [
                {
                    "round": f.index,
                    "seed": f.seed,
                    "seat": f.seat,
                    "faults": [x.to_json() for x in f.faults],
                    "replay": self.replay(f.seats, combo.variant, f.seed),
                }
                for f in faulty
            ],
            "opponent_faults": opponent_faults,
        }
        warnings: tuple[str, ...] = ()
        if opponent_faults:
            warnings = (
                f"the {OPPONENT} opponents had {len(opponent_faults)} faults (not the bot's; "
                f"first: {opponent_faults[0]})",
            )
        if not faulty:
            detail = f"{played} rounds, {bot_moves} moves of the bot, every seat, no faults"
            return CheckResult(f"play {combo}", True, detail, warnings, data=data)
        stopped = (
            f" (stopped after {MAX_FAULTY_ROUNDS} faulty rounds)"
            if len(faulty) >= MAX_FAULTY_ROUNDS and played < self.rounds
            else ""
        )
        kinds = sorted({x.kind for f in faulty for x in f.faults})
        lines = [
            f"faults ({', '.join(kinds)}) in {len(faulty)} of {played} rounds{stopped}",
        ]
        for f in faulty[:FAULTS_LISTED]:
            lines.append(
                f"round {f.index} (seed {f.seed}, bot in seat {f.seat} of {n}): "
                + _fault_line(f.faults[0])
            )
            lines.append(f"  replay: {self.replay(f.seats, combo.variant, f.seed)}")
        if len(faulty) > FAULTS_LISTED:
            lines.append(f"... and {len(faulty) - FAULTS_LISTED} more faulty rounds")
        return CheckResult(f"play {combo}", False, "\n".join(lines), warnings, data=data)

    # --- determinism --------------------------------------------------------------------------

    def determinism(self, combos: Sequence[Combination]) -> CheckResult:
        """Replay the kept rounds with a fresh host for the bot and compare the records."""
        total = sum(len(self.kept.get(c, [])) for c in combos)
        name = "determinism"
        if total == 0:
            return CheckResult(
                name,
                True,
                "not checked: no round without faults to replay",
                skipped=True,
            )
        self.say(f"checking {self.spec}: determinism, {total} rounds replayed")
        fresh = self.fresh
        compared = 0
        differences: list[str] = []
        for combo in combos:
            referee = Referee(combo.variant, move_time=self.move_time)
            for seat, first in self.kept.get(combo, []):
                handles = _seating(fresh, self.opponents, seat, combo.players)
                again = referee.play_round(handles, seed=first.seed)
                compared += 1
                difference = _difference(first, again)
                if difference is not None:
                    differences.append(
                        f"{combo}, seed {first.seed}, bot in seat {seat}: {difference}"
                    )
        data = {"rounds": compared, "differences": differences}
        if not differences:
            detail = (
                f"{compared} rounds replayed by a fresh process gave the same records (times aside)"
            )
            return CheckResult(name, True, detail, data=data)
        lines = [
            f"{len(differences)} of {compared} rounds played differently with the same seed "
            "(the bot must draw all its randomness from the seed given to reset, and keep "
            "nothing from earlier rounds)",
            *differences[:FAULTS_LISTED],
        ]
        return CheckResult(name, False, "\n".join(lines), data=data)

    # --- match --------------------------------------------------------------------------------

    def match(self, combo: Combination) -> CheckResult:
        """A whole match of ``combo`` with the bot in seat 0."""
        self.say(f"checking {self.spec}: a whole match, {combo}")
        referee = Referee(combo.variant, move_time=self.move_time)
        seed = derive_seed(self.seed, "check", "match", combo.variant, combo.players)
        self.clock.where = f"the match ({combo}, seed {seed})"
        handles = _seating(self.bot, self.opponents, 0, combo.players)
        record = referee.play_match(handles, seed=seed)
        name = f"whole match ({combo})"
        mine = [
            (number, f)
            for number, rnd in enumerate(record.rounds, 1)
            for f in rnd.faults
            if f.seat == 0
        ]
        tokens = "-".join(map(str, record.tokens))
        outcome = "won by the bot" if record.winner == 0 else f"won by seat {record.winner}"
        data = {
            "seed": seed,
            "rounds": len(record.rounds),
            "tokens": list(record.tokens),
            "winner": record.winner,
            "faults": [dict(f.to_json(), round=number) for number, f in mine],
        }
        summary = f"{len(record.rounds)} rounds, tokens {tokens}, {outcome} (match seed {seed})"
        if not mine:
            return CheckResult(name, True, summary + ", no faults", data=data)
        lines = [f"{len(mine)} faults of the bot (seat 0) in the match: {summary}"]
        lines.extend(f"round {number}: {_fault_line(f)}" for number, f in mine[:FAULTS_LISTED])
        lines.append(
            "  replay: "
            + _replay_command(record.seats, combo.variant, seed, self.move_time, self.sandbox)
            + " --match"
        )
        return CheckResult(name, False, "\n".join(lines), data=data)

    # --- time ---------------------------------------------------------------------------------

    def timing(self) -> CheckResult:
        """Mean and maximum time per answer of the bot; a warning past :data:`WARN_SHARE` of
        the limit."""
        clock = self.clock
        name = "time per move"
        if clock.moves == 0:
            return CheckResult(name, True, "not measured: the bot answered no move", skipped=True)
        mean = clock.total / clock.moves
        data = {
            "moves": clock.moves,
            "mean": mean,
            "max": clock.max,
            "max_at": clock.max_where,
            "limit": self.move_time,
        }
        detail = (
            f"mean {format_time(mean)}, max {format_time(clock.max)} over {clock.moves} moves "
            f"(limit {self.move_time:g} s); slowest: {clock.max_where}"
        )
        warnings: tuple[str, ...] = ()
        if clock.max > self.move_time * WARN_SHARE:
            warnings = (
                f"the slowest move took {format_time(clock.max)}, within "
                f"{1 - WARN_SHARE:.0%} of the limit of {self.move_time:g} s: a slower machine or "
                "a busy one may make it a timeout (size the bot's search to about half the limit)",
            )
        return CheckResult(name, True, detail, warnings, data=data)


def _difference(first: GameRecord, again: GameRecord) -> str | None:
    """How two records of the same round differ (times and what the bot wrote aside: a bot's
    output is not its play), or ``None`` if they do not."""
    a = first.to_json()
    b = again.to_json()
    for timed in ("times", "slowest", "output"):
        a.pop(timed, None)
        b.pop(timed, None)
    if a == b:
        return None
    for i, (x, y) in enumerate(zip(first.actions, again.actions, strict=False)):
        if x != y:
            return (
                f"after {i} equal action{'s' if i != 1 else ''}, the first run played {x[1]} "
                f"(seat {x[0]}), "
                f"the replay {y[1]} (seat {y[0]})"
            )
    if first.faults != again.faults:
        one = "; ".join(_fault_line(f) for f in first.faults) or "no faults"
        two = "; ".join(_fault_line(f) for f in again.faults) or "no faults"
        return f"the first run had {one}, the replay {two}"
    if len(first.actions) != len(again.actions):
        return f"the first run played {len(first.actions)} actions, the replay {len(again.actions)}"
    keys = [k for k in a if a[k] != b.get(k)]
    return "the records differ in " + ", ".join(keys)


def _opponent_entry(catalog: Catalog) -> BotEntry:
    entry = catalog.bots.get(OPPONENT)
    if entry is None:
        raise ArenaError(
            f"the reference bot {OPPONENT!r}, the opponent in conformance runs, is not installed "
            "(is the loveletter-arena package installed with its entry points?)"
        )
    return entry


def run_checks(
    bot: str,
    catalog: Catalog,
    sandbox: Sandbox,
    rounds: int = 200,
    seed: int = 0,
    move_time: float = DEFAULT_MOVE_TIME,
    memory_mb: int = 2048,
    progress: Callable[[str], None] | None = None,
) -> CheckReport:
    """Run every conformance check on the bot named ``bot`` (``NAME[param=value,...]``).

    The bot runs in its own host process under ``sandbox`` with ``memory_mb`` MiB (0: no limit),
    against hosted ``uniform`` reference bots, with ``move_time`` seconds per move. ``rounds``
    random rounds are played per claimed variant and player count, their decks and the bots'
    seeds derived from ``seed``, so a run is reproducible. ``progress``, when given, is called
    with one short line per stage.

    Raises :class:`~arena.errors.UnknownBotError` when ``bot`` does not resolve in ``catalog``,
    and :class:`~arena.errors.ArenaError` when the ``uniform`` opponent is not installed; every
    problem of the bot itself is a failed check in the returned :class:`CheckReport`.
    """
    begun = time.perf_counter()
    spec, entry = catalog.resolve(bot)
    opponent = _opponent_entry(catalog)
    settings = {
        "rounds": rounds,
        "seed": seed,
        "move_time": move_time,
        "memory_mb": memory_mb,
        "sandbox": sandbox.kind,
    }
    report = CheckReport(str(spec), entry, settings)
    claims, combos = _claims_check(entry)
    report.checks.append(claims)
    if not combos:
        report.seconds = time.perf_counter() - begun
        return report
    run = _Run(str(spec), entry, opponent, sandbox, rounds, seed, move_time, memory_mb, progress)
    try:
        for combo in combos:
            report.checks.append(run.play(combo))
        report.checks.append(run.determinism(combos))
        preferred = Combination(*MATCH_COMBINATION)
        combo = preferred if preferred in combos else combos[0]
        play = next(c for c in report.checks if c.name == f"play {combo}")
        if play.passed:
            report.checks.append(run.match(combo))
        else:
            report.checks.append(
                CheckResult(
                    f"whole match ({combo})",
                    True,
                    f"not played: the bot already has faults in {combo} (see above)",
                    skipped=True,
                )
            )
        report.checks.append(run.timing())
    finally:
        run.close()
    report.seconds = time.perf_counter() - begun
    return report
