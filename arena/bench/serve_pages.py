"""``serve_page_ms``: how long the pages of ``arena serve`` take to load over a ladder of
100,000 stored games (issue 24: "page loads stay under 200 ms with 100,000 games stored").

The benchmark builds a ladder in a temporary SQLite database (:func:`build_ladder`), starts the
real application (:func:`arena.serve.app.create_app` without its background workers: nothing is
built, played or refit while it is timed) as ``arena serve`` serves it (uvicorn held to the
default traffic limits, :func:`arena.serve.server.guarded_server`) on a free loopback port
(:func:`serving`), and times plain HTTP GETs of every read-only page, each on a fresh connection
as a browser's first load (:func:`time_pages`). The figure is the median of the slowest page, in
milliseconds; :data:`PAGE_MS` keeps every page's median of the last run, and with
``ARENA_BENCH_PAGES=1`` in the environment they are also printed to standard error.

The ladder is shaped as :class:`LadderShape` says: placement tournaments (a gauntlet of one
player against all the others, named as the server names a placement) spread among many rounds
of rated games (one pair, both seatings of fresh decks, named as the server names them), every
tournament on secret ``balanced`` decks and finished, its ladder seats recorded. Every stored
game is a real game of its own (no record is stored twice): planned by the tournament runner's
own :func:`~arena.tournament.runner.plan_tournament` (keys, deck positions, rotations, seeds) and
played by the engine under the referee between the reference bots, in-process bots in the
benchmark's own processes (no host, no sandbox: they are the arena's own bots, and only the
records matter here).
The standings are refit for real (:func:`arena.serve.standings.refresh_standings`) a few times
while the ladder grows, and a snapshot is stored after every tournament, as the server stores one
after every round: between two refits it repeats the latest fit (refitting 100,000 games after
each of hundreds of tournaments would take too long for a benchmark).

Building the default ladder takes about 90 s on two cores (a process per core plans and plays
the tournaments, this one stores them and refits); it is built afresh for every run, in a
temporary directory, and nothing is cached.
"""

from __future__ import annotations

import os
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.hosting.catalog import Catalog
    from arena.serve.ladder import LadderSettings
    from arena.tournament.runner import Plan, TournamentSpec
    from leaderboard.store import GameEntry, Store

#: The pages timed, by what :data:`PAGE_MS` calls them, with their paths (``{bot}`` and
#: ``{game}`` filled in by :func:`page_paths`).
PAGES = {
    "/": "/",
    "/api/leaderboard": "/api/leaderboard",
    "/bots/NAME": "/bots/{bot}",
    "/api/bots/NAME": "/api/bots/{bot}",
    "/games/ID": "/games/{game}",
    "/api/games/ID": "/api/games/{game}",
}
#: The median milliseconds of each page in the last :func:`serve_page_ms` run, by page.
PAGE_MS: dict[str, float] = {}
#: Set (to anything but ``0`` or empty) to print each page's median to standard error.
VERBOSE_VAR = "ARENA_BENCH_PAGES"
#: Seconds a page may take before the benchmark gives up on it.
REQUEST_SECONDS = 60.0
#: Every page is loaded at least this many times (after its warm-up load).
MIN_LOADS = 5

#: The ladder's players: reference bots (some with settings of their own), each cheap to play.
PLAYERS = (
    "random",
    "greedy",
    "strategic",
    "knowledge",
    "riskmatrix",
    "uniform",
    "knowledge[code_rules=false]",
    "montecarlo[playouts=50]",
    "ismcts[iterations=50]",
    "pimc[determinizations=5,iterations=20]",
)


class ServeBenchError(ArenaError):
    """The page benchmark cannot run (the ``serve`` extra is missing) or a page failed."""


@dataclass(frozen=True)
class LadderShape:
    """The ladder :func:`build_ladder` stores between ``players``: ``placements`` gauntlets
    (one player against every other on ``placement_decks`` decks, both seatings; the players in
    turn) spread evenly among ``rated_rounds`` rounds of rated games (one pair on
    ``rated_decks`` decks, both seatings; the pairs in turn), a standings snapshot after each
    tournament, ``refits`` of them real refits (after the first tournament, after the last, and
    evenly in between), the others a repeat of the latest.

    The server's own shape is a placement on 20 decks against the field and rounds of 5 decks
    (10 games): 100,000 games would be some 10,000 tournaments, too slow to create for a
    benchmark. The default here is in between: 20 placements of 3,060 games and 500 rounds of
    100 games, 111,200 games in 520 tournaments, with 520 snapshots."""

    players: tuple[str, ...] = PLAYERS
    placements: int = 20
    placement_decks: int = 170
    rated_rounds: int = 500
    rated_decks: int = 50
    refits: int = 4
    name: str = "ladder"

    @property
    def games(self) -> int:
        """How many games the ladder stores."""
        others = len(self.players) - 1
        return 2 * (
            self.placements * others * self.placement_decks + self.rated_rounds * self.rated_decks
        )

    @property
    def tournaments(self) -> int:
        """How many tournaments the ladder stores."""
        return self.placements + self.rated_rounds


#: The shape :func:`serve_page_ms` measures.
DEFAULT_SHAPE = LadderShape()


@dataclass(frozen=True)
class LadderBuilt:
    """What :func:`build_ladder` stored: ``games``, ``tournaments``, ``snapshots`` and the real
    refits among them, and the seconds it took."""

    games: int
    tournaments: int
    snapshots: int
    refits: int
    seconds: float


def require_serve() -> None:
    """Raise :class:`ServeBenchError` (one line) unless the ``serve`` extra is installed."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ServeBenchError(
            f"serve_page_ms needs the 'serve' extra (pip install 'loveletter-arena[serve]'): {exc}"
        ) from None


def ladder_specs(shape: LadderShape, settings: LadderSettings) -> Iterator[TournamentSpec]:
    """The ladder's tournaments in the order they are stored, as
    :class:`~arena.tournament.runner.TournamentSpec`: placements spread evenly among the rounds
    of rated games, each tournament with a seed and secret of its own (so that the fixture is
    the same every time)."""
    from arena.seeds import derive_seed
    from arena.tournament.runner import TournamentSpec

    pairs = list(combinations(shape.players, 2))
    total = shape.tournaments
    placed_at = {round(k * total / shape.placements) for k in range(shape.placements)}
    placed = rated = 0
    for index in range(total):
        secret = derive_seed(24, "serve bench", index)
        if index in placed_at:
            bot = shape.players[placed % len(shape.players)]
            placed += 1
            yield TournamentSpec(
                decks=f"balanced:{shape.placement_decks}",
                bots=tuple(p for p in shape.players if p != bot),
                gauntlet=bot,
                name=settings.placement(placed, bot),
                seed=index,
                secret=secret,
            )
        else:
            rated += 1
            yield TournamentSpec(
                decks=f"balanced:{shape.rated_decks}",
                bots=pairs[(rated - 1) % len(pairs)],
                name=settings.rated(rated),
                seed=index,
                secret=secret,
            )


class InProcessPlayers:
    """The ladder's players as in-process bots, built once each from the reference bots'
    declarations (:func:`bots.policy.reference_bots`) with the settings their entrant names
    give, playing under one :class:`~arena.referee.play.Referee`."""

    def __init__(self, catalog: Catalog) -> None:
        from arena.referee.play import Referee

        self.catalog = catalog
        self.referee = Referee("classic", move_time=None)
        self._bots: dict[str, Any] = {}

    def bot(self, name: str) -> Any:
        """The bot of entrant ``name`` (a canonical bot spec), built on first use."""
        if name not in self._bots:
            from bots.policy import reference_bots

            spec, entry = self.catalog.resolve(name)
            self._bots[name] = reference_bots()[entry.name].factory()(
                **spec.settings(entry.params, entry.rules)
            )
        return self._bots[name]

    def play(self, plan: Plan) -> list[GameEntry]:
        """Every game of ``plan``'s schedule, played as a tournament worker plays it (the
        scheduled deck and seed, the entrants in the scheduled seats)."""
        from arena.referee.play import InProcessHandle

        entries: list[GameEntry] = []
        for game in plan.schedule:
            handles = [InProcessHandle(self.bot(name), name=name) for name in game.seats]
            record = self.referee.play_round(handles, deck=plan.decks[game.deck], seed=game.seed)
            entries.append((game.key, game.deck, game.rotation, record))
        return entries


#: The in-process players of a worker of :func:`build_ladder` (set by :func:`_start_worker`).
_worker_players: InProcessPlayers | None = None


def _start_worker(catalog: Catalog) -> None:
    """Start a worker process of :func:`build_ladder`: its players, over ``catalog``."""
    global _worker_players
    _worker_players = InProcessPlayers(catalog)


def _plan_and_play(spec: TournamentSpec) -> tuple[Plan, list[GameEntry]]:
    """In a worker: plan the tournament of ``spec`` and play every game of it."""
    from arena.tournament.runner import plan_tournament

    assert _worker_players is not None
    plan = plan_tournament(spec, _worker_players.catalog)
    return plan, _worker_players.play(plan)


def _played(
    shape: LadderShape, catalog: Catalog, workers: int
) -> Iterator[tuple[Plan, list[GameEntry]]]:
    """The ladder's tournaments, planned and played, in order: in this process with one
    worker, else in ``workers`` processes, a few tournaments ahead of the caller."""
    from arena.serve.ladder import LadderSettings

    specs = ladder_specs(shape, LadderSettings(name=shape.name))
    if workers <= 1:
        _start_worker(catalog)
        yield from (_plan_and_play(spec) for spec in specs)
        return
    import multiprocessing
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, context, _start_worker, (catalog,)) as pool:
        ahead: deque[Future[tuple[Plan, list[GameEntry]]]] = deque()
        for spec in specs:
            ahead.append(pool.submit(_plan_and_play, spec))
            if len(ahead) > 2 * workers:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()


def _store_tournament(store: Store, plan: Plan, entries: Sequence[GameEntry]) -> int:
    """Store ``plan``'s tournament with its played ``entries``, finished, and its ladder seats
    (each entrant a reference bot: its own ladder player, as
    :func:`arena.serve.ladder.ladder_seats` would record it); its id."""
    from arena.tournament.runner import start
    from leaderboard import competition as C

    tid = start(plan, store)
    for first in range(0, len(entries), 1000):
        store.record_block(tid, entries[first : first + 1000])
    store.set_status(tid, "finished")
    C.record_seats(store, tid, {e.name: e.name for e in plan.entrants})
    return tid


def _repeat_latest_snapshot(store: Store, name: str) -> None:
    """Store competition ``name``'s latest snapshot again, as it is (the same fit, games and
    last game looked at), as the next one."""
    from leaderboard import competition as C

    latest = C.latest_snapshot(store, name)
    assert latest is not None  # a real refit comes first
    fit = {"standings": latest.standings, "pairs": latest.pairs, "faults": latest.faults}
    C.save_snapshot(store, name, fit, latest.games, latest.through_game)


def build_ladder(
    store: Store, shape: LadderShape = DEFAULT_SHAPE, workers: int | None = None
) -> LadderBuilt:
    """Store the ladder ``shape`` describes in ``store`` (an empty database): every tournament
    planned and played (by ``workers`` processes, default one per core; 1: this process) and
    stored in turn; after each, one standings snapshot: a real refit
    (:func:`~arena.serve.standings.refresh_standings`) after the first tournament, the last and
    evenly in between (``shape.refits`` in all), the latest snapshot repeated after the others
    (see the module's description)."""
    from arena.hosting.catalog import load_catalog
    from arena.hosting.sandbox import choose_sandbox
    from arena.serve.ladder import LadderSettings
    from arena.serve.standings import refresh_standings
    from arena.tournament.pool import default_workers

    begun = time.perf_counter()
    store.create_schema()
    settings = LadderSettings(name=shape.name)
    catalog = load_catalog(choose_sandbox("auto"))
    last = shape.tournaments - 1
    refits = max(1, shape.refits)
    refit_at = {last} if refits == 1 else {round(k * last / (refits - 1)) for k in range(refits)}
    games = refitted = 0
    for index, (plan, entries) in enumerate(_played(shape, catalog, workers or default_workers())):
        _store_tournament(store, plan, entries)
        games += len(entries)
        if index in refit_at:
            refresh_standings(store, settings)
            refitted += 1
        else:
            _repeat_latest_snapshot(store, shape.name)
    seconds = time.perf_counter() - begun
    return LadderBuilt(games, shape.tournaments, shape.tournaments, refitted, seconds)


def ladder_database(where: Path, shape: LadderShape = DEFAULT_SHAPE) -> str:
    """The URL of a new SQLite database in the directory ``where`` holding the ladder
    ``shape`` (:func:`build_ladder`)."""
    from leaderboard.store import Store

    url = f"sqlite:///{where / 'ladder.db'}"
    builder = Store(url)
    try:
        build_ladder(builder, shape)
    finally:
        builder.close()
    return url


# --- the pages ----------------------------------------------------------------------------------


@contextmanager
def serving(store: Store, spool: Path, settings: LadderSettings) -> Iterator[str]:
    """The server's application over ``store`` (:func:`arena.serve.app.create_app` without
    its background workers; uploads would be kept under ``spool``) served as ``arena serve``
    serves it (held to the default traffic limits) in a thread of this process on a free
    loopback port, as long as the block runs; its base URL."""
    require_serve()
    from arena.serve.app import create_app
    from arena.serve.server import guarded_server
    from arena.serve.traffic import traffic_limits

    app = create_app(store, spool, ladder_settings=settings, background=False)
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    port = int(listening.getsockname()[1])
    server = guarded_server(
        app, traffic_limits(), listening, log_config=None, log_level="error", access_log=False
    )
    thread = threading.Thread(target=server.run, name="serve-bench", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + REQUEST_SECONDS
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise ServeBenchError("the server did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(REQUEST_SECONDS)
        listening.close()


def page_paths(store: Store, settings: LadderSettings) -> dict[str, str]:
    """The path of each page of :data:`PAGES`: the bot pages of the leaderboard's first
    player, the game pages of the newest game."""
    from leaderboard import competition as C

    latest = C.latest_snapshot(store, settings.name)
    if latest is None or not latest.standings:
        raise ServeBenchError(f"the competition {settings.name!r} has no standings")
    bot = urllib.parse.quote(str(latest.standings[0]["bot"]), safe="")
    game = store.latest_game_id()
    return {page: path.format(bot=bot, game=game) for page, path in PAGES.items()}


def load_page(opener: urllib.request.OpenerDirector, url: str) -> float:
    """Milliseconds to load ``url`` on a new connection, from the request to the last byte of
    the answer; :class:`ServeBenchError` unless it answers 200."""
    begun = time.perf_counter()
    try:
        with opener.open(url, timeout=REQUEST_SECONDS) as answer:
            answer.read()
            status = answer.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError as exc:
        raise ServeBenchError(f"{url}: {exc}") from None
    spent = (time.perf_counter() - begun) * 1000
    if status != 200:
        raise ServeBenchError(f"{url} answered {status}")
    return spent


def time_pages(base: str, paths: dict[str, str], seconds: float) -> dict[str, list[float]]:
    """Load every page of ``paths`` (name to path under ``base``) once to warm up, then each in
    turn (at least :data:`MIN_LOADS` times) until ``seconds`` have passed; the milliseconds of
    every timed load, by page."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy
    for path in paths.values():
        load_page(opener, base + path)
    times: dict[str, list[float]] = {page: [] for page in paths}
    begun = time.perf_counter()
    loads = 0
    while loads < MIN_LOADS or time.perf_counter() - begun < seconds:
        for page, path in paths.items():
            times[page].append(load_page(opener, base + path))
        loads += 1
    return times


def measure_pages(
    store: Store, settings: LadderSettings, spool: Path, seconds: float
) -> dict[str, float]:
    """Serve ``store`` (:func:`serving`) and time its pages (:func:`time_pages`) for
    ``seconds``: each page's median milliseconds."""
    with serving(store, spool, settings) as base:
        times = time_pages(base, page_paths(store, settings), seconds)
    return {page: statistics.median(loads) for page, loads in times.items()}


def serve_page_ms(seconds: float) -> float:
    """Milliseconds the slowest page of ``arena serve`` takes to load (its median) over a
    ladder of :data:`DEFAULT_SHAPE` (111,200 games), built for the run in a temporary
    directory; every page's median is kept in :data:`PAGE_MS` (and printed to standard error
    with ``ARENA_BENCH_PAGES=1``)."""
    require_serve()
    from arena.serve.ladder import LadderSettings
    from leaderboard.store import Store

    settings = LadderSettings(name=DEFAULT_SHAPE.name)
    with tempfile.TemporaryDirectory(prefix="arena-serve-bench-") as where:
        url = ladder_database(Path(where))
        store = Store(url)  # as the server opens it
        try:
            medians = measure_pages(store, settings, Path(where) / "spool", seconds)
        finally:
            store.close()
    PAGE_MS.clear()
    PAGE_MS.update(medians)
    if os.environ.get(VERBOSE_VAR, "") not in ("", "0"):
        for page, ms in medians.items():
            print(f"serve_page_ms: {page:<18} {ms:8.1f} ms", file=sys.stderr)
    return max(medians.values())
