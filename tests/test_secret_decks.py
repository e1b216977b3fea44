"""Secret deck sets for ranked play: ``balanced:N`` and ``random:N`` are drawn from a secret seed
for each tournament, kept in the database, and published once the tournament is finished.

The attack they stop is in ``tests/fixtures/deck_spy``: a bot that regenerates every deck it
can know in advance (``fixed36`` and deck ``k < 36`` of every ``random:N:S`` with ``S < 2000``)
and matches them against its first observation. It recognises public decks and cannot
recognise secret ones, both in-process over whole deck sets and as a real bot in a real
tournament.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner, Result
from processes import StopAfter, interruptible, signal_when_stored

from arena.cli.main import cli
from arena.decks.sets import load_deck_set, openings, passes_criterion
from arena.decks.specs import draw_secret_seed
from arena.engine.layout import CARD_COUNTS
from arena.game.round import Game
from arena.hosting.catalog import Catalog, load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.seeds import derive_seed
from arena.tournament.pool import LocalPool
from arena.tournament.runner import (
    Plan,
    RunSummary,
    TournamentSpec,
    plan_resume,
    plan_tournament,
    run_tournament,
    worker_setup,
)
from leaderboard.store import Store

SANDBOX = choose_sandbox("none")
SPY = Path(__file__).parent / "fixtures" / "deck_spy"


# --- the spies, installed as a real package -----------------------------------------------------


@pytest.fixture(scope="session")
def spy_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the ``arena-test-deck-spy`` package, pip-installed into it (from a
    copy, so that no build files are left among the fixtures)."""
    where = tmp_path_factory.mktemp("deck-spy")
    source = where / "source"
    shutil.copytree(SPY, source)
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
            "--disable-pip-version-check", "--target", str(where / "site"), str(source),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return where / "site"


@pytest.fixture(scope="module")
def spies(faulty_site: Path, spy_site: Path) -> Iterator[None]:
    """The spies and the faulty test bots, visible to this process and to bot hosts (for the
    tests of this module)."""
    with pytest.MonkeyPatch.context() as patch:
        for site in (faulty_site, spy_site):
            patch.syspath_prepend(str(site))
        outer = os.environ.get("PYTHONPATH")
        sites = (str(spy_site), str(faulty_site), outer)
        patch.setenv("PYTHONPATH", os.pathsep.join(p for p in sites if p))
        importlib.invalidate_caches()
        yield


@pytest.fixture(scope="module")
def catalog(spies: None) -> Catalog:
    return load_catalog(SANDBOX)


# --- the attack in-process: whole deck sets -----------------------------------------------------


def _recogniser_module() -> ModuleType:
    """The spy's own recogniser module, loaded from the fixture's source."""
    spec = importlib.util.spec_from_file_location(
        "deck_spy_recogniser", SPY / "deck_spy" / "recogniser.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def recogniser() -> Any:
    """The attack's index of the 72,036 decks it knows (built in about two seconds)."""
    module = _recogniser_module()
    return module.Recogniser(module.known_decks())


def recognised(recogniser: Any, deck: tuple[int, ...]) -> tuple[int, bool]:
    """How many known decks match seat 0's first observation of ``deck`` (classic, 2 players),
    and whether ``deck`` itself is one of them."""
    names = recogniser.matches(Game(2, "classic", deck=list(deck)).observation(0))
    return len(names), any(recogniser.known[name] == deck for name in names)


@pytest.mark.parametrize("spec", ["fixed36", "random:36:7"])
def test_the_attack_recognises_every_public_deck(recogniser: Any, spec: str) -> None:
    # Deterministic: these decks are fixed, so this holds or fails the same every time.
    for deck in load_deck_set(spec).decks:
        count, found = recognised(recogniser, deck)
        assert found
        # the first observation rules out more than 99.8% of what the attack knows
        assert count <= len(recogniser.known) // 500


def chance_of_three_hits(known: int, decks: int) -> float:
    """An upper bound on the chance that ``decks`` balanced decks drawn from a random seed put
    three or more of their orders among ``known`` given orders.

    Deck ``k`` of ``balanced:N`` is a uniform candidate order that passes the criterion with a
    set-aside card the quota still allows, so given the decks before it, it is any one order
    with probability at most ``1 / P`` where ``P`` is the fewest passing orders with any one
    set-aside card (counted exactly below over the four cards the criterion reads). A deck
    lands among the known orders with probability at most ``q = known / P``, whatever came
    before, so the hits are dominated by a binomial: P(3 or more) <= C(decks, 3) q^3.
    """
    table = openings()
    counts = [int(c) for c in CARD_COUNTS]
    total = sum(counts)
    orders = math.factorial(total)
    for c in counts:
        orders //= math.factorial(c)

    def chance(prefix: tuple[int, ...]) -> float:
        left, n, p = list(counts), total, 1.0
        for v in prefix:
            p *= left[v] / n
            left[v] -= 1
            n -= 1
        return p

    fewest = math.inf
    for aside in range(1, 9):
        passing = 0.0
        for a, b, c in itertools.product(range(1, 9), repeat=3):
            prefix = (aside, a, b, c)
            possible = all(prefix.count(v) <= counts[v] for v in prefix)
            if possible and passes_criterion(prefix, table):
                passing += chance(prefix)
        fewest = min(fewest, passing * orders)
    q = known / fewest
    return math.comb(decks, 3) * q**3


def test_the_attack_cannot_recognise_balanced_decks(recogniser: Any) -> None:
    # A fresh secret, as a tournament draws it. The attack still finds known decks that match
    # the first observation (a few dozen, by chance), but they are not the deck: the deck is
    # among them for no more than 2 of 36 decks, which fails by bad luck with a chance below
    # one in a million (the bound is computed, not assumed). For public decks it is 36 of 36.
    decks = load_deck_set("balanced:36", secret=draw_secret_seed()).decks
    assert chance_of_three_hits(len(recogniser.known), len(decks)) < 1e-6
    results = [recognised(recogniser, deck) for deck in decks]
    assert sum(found for _, found in results) <= 2
    assert sum(count for count, _ in results) > 0  # the attack did look: chance matches exist


# --- the attack through a real host in a real tournament ----------------------------------------


def spy_reports(store: Store, tournament_id: int) -> list[tuple[int, list[str]]]:
    """For every game where the spy named matches, the deck position and the names."""
    reports = []
    for game in store.stored_games(tournament_id):
        for fault in game.record.faults:
            if game.record.seats[fault.seat] == "deckspy" and "deckspy:" in fault.message:
                text = fault.message.split("matches: ", 1)[1].split(" (at ", 1)[0]
                assert game.deck is not None
                reports.append((game.deck, text.split()))
    return reports


def play(plan: Plan, store: Store, **kw: Any) -> RunSummary:
    setup = worker_setup(plan, SANDBOX)
    return run_tournament(plan, store, lambda: LocalPool(setup, 1), **kw)


@pytest.mark.slow
def test_the_spy_bot_recognises_public_decks_in_play_but_not_secret_ones(
    catalog: Catalog, recogniser: Any, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path}/spy.db")
    # the spy moves first in the second game on each deck, so it is restarted once per deck
    bots = ("honest", "deckspy")
    public = plan_tournament(TournamentSpec(decks="random:2:7", bots=bots), catalog, store)
    reports = spy_reports(store, play(public, store).tournament_id)
    # seat 0 of both games where the spy moves first: it names the deck, so it knows every card
    assert sorted(deck for deck, _ in reports) == [0, 1]
    for deck, names in reports:
        assert f"random:7#{deck}" in names

    secret = plan_tournament(TournamentSpec(decks="balanced:2", bots=bots), catalog, store)
    for deck, names in spy_reports(store, play(secret, store).tournament_id):
        assert all(recogniser.known[name] != secret.decks[deck] for name in names)


# --- the secret is stored, hidden, and published once the tournament is finished ----------------


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_the_secret_seed_reaches_no_host(catalog: Catalog, tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/leak.db")
    spec = TournamentSpec(decks="balanced:2", bots=("leakspy", "honest"), max_faults=None)
    plan = plan_tournament(spec, catalog, store)
    summary = play(plan, store)
    assert summary.complete
    secret = store.secret(summary.tournament_id)
    assert secret is not None and secret == plan.deck_secret
    assert secret.bit_length() > 64  # far beyond any seed an attacker could try
    detail = store.tournament(summary.tournament_id)
    assert [tuple(d) for d in detail.decks] == list(plan.decks)
    assert load_deck_set("balanced:2", secret=secret).decks == plan.decks
    # what the spy's host was given: command line, environment, seeds and observations
    seen = [
        fault.message
        for game in store.stored_games(summary.tournament_id)
        for fault in game.record.faults
        if fault.message.startswith("RuntimeError: leakspy saw")
    ]
    # at least the two games where it moves first (at seat 1 it may be out before it moves)
    assert len(seen) >= 2 and all('"argv"' in s and '"environ"' in s for s in seen)
    forms = {str(secret), f"{secret:x}", f"{secret:X}"}
    forms |= {str(derive_seed(secret, "balanced", k)) for k in range(100)}
    given = [
        *seen,
        json.dumps(plan.configuration),
        plan.name,
        repr(worker_setup(plan, SANDBOX)),
    ]
    assert not [form for form in forms for text in given if form in text]


def deck_texts(decks: tuple[tuple[int, ...], ...]) -> list[str]:
    """How a deck order could be printed: digits, or values separated by spaces."""
    return [text for d in decks for text in ("".join(map(str, d)), " ".join(map(str, d)))]


def report_outputs(url: str, tmp_path: Path) -> tuple[dict[str, Any], str, str]:
    """The report of the latest tournament: JSON, text (its lines joined by spaces) and HTML."""
    data = invoke("report", "--json", "--db", url)
    text = invoke("report", "--db", url)
    page = tmp_path / "report.html"
    html = invoke("report", "--html", str(page), "--db", url)
    assert data.exit_code == text.exit_code == html.exit_code == 0, data.output + text.output
    return json.loads(data.output), " ".join(text.output.split()), page.read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_secret_is_published_only_once_finished_and_resumes_keep_it(
    catalog: Catalog, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/t.db"
    store = Store(url)
    spec = TournamentSpec(decks="balanced:4", bots=("honest", "uniform"), seed=5)
    plan = plan_tournament(spec, catalog, store)
    secret = plan.deck_secret
    assert secret is not None and not plan.public_decks
    part = play(plan, store, block_size=2, progress=StopAfter(3))
    assert part.interrupted and not part.complete
    tid = part.tournament_id
    assert store.secret(tid) == secret

    # unfinished: no seed and no deck order anywhere a person reads
    detail = store.tournament(tid)
    assert detail.secret_decks and not detail.decks_revealed and detail.published_seed is None
    data, text, html = report_outputs(url, tmp_path)
    assert data["decks"] == {
        "spec": "balanced:4",
        "count": 4,
        "public": False,
        "seed": None,
        "reproduce": None,
        "orders": None,
    }
    assert "Secret decks (balanced:4)" in text and "published here once" in html
    for shown in (json.dumps(data), text, html):
        assert str(secret) not in shown
        assert not [d for d in deck_texts(plan.decks) if d in shown]
    game = store.stored_games(tid)[0]
    refused = invoke("replay", str(game.id), "--reveal", "--db", url)
    assert refused.exit_code == 2
    assert "secret decks and is not finished" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    public_view = json.loads(invoke("replay", str(game.id), "--json", "--db", url).output)
    assert public_view["hidden"] is True and public_view["deck"] is None
    assert all(e["visible_to"] is None for e in public_view["events"])
    assert public_view["actions"] == [list(a) for a in game.record.actions]
    shown = invoke("replay", str(game.id), "--db", url)
    assert shown.output.splitlines()[1:] == game.record.log_lines()

    # --resume ID plays the stored decks; the same settings find the same secret
    assert plan_resume(store, tid, catalog).decks == plan.decks
    assert plan_resume(store, tid, catalog).deck_secret == secret
    again = plan_tournament(spec, catalog, store)
    assert (again.deck_secret, again.decks) == (secret, plan.decks)
    rest = play(again, store)
    assert rest.tournament_id == tid and rest.complete
    assert rest.stored_before == part.total - part.left

    # finished: the seed is published, and it gives the decks played
    detail = store.tournament(tid)
    assert detail.status == "finished" and detail.published_seed == secret
    data, text, html = report_outputs(url, tmp_path)
    assert data["decks"]["seed"] == str(secret)
    assert data["decks"]["reproduce"] == f"balanced:4:{secret}"
    assert data["decks"]["orders"] == [list(d) for d in plan.decks]
    assert load_deck_set(data["decks"]["reproduce"]).decks == plan.decks
    assert str(secret) in text and str(secret) in html
    revealed = invoke("replay", str(game.id), "--reveal", "--db", url)
    assert revealed.exit_code == 0
    assert "deck (top first): " + " ".join(map(str, game.record.deck)) in revealed.output


def test_random_without_a_seed_draws_a_secret_one(catalog: Catalog, tmp_path: Path) -> None:
    spec = TournamentSpec(decks="random:3", bots=("honest", "uniform"))
    one, two = plan_tournament(spec, catalog), plan_tournament(spec, catalog)
    assert one.deck_secret is not None and two.deck_secret is not None
    assert one.deck_secret != two.deck_secret  # 128 random bits each
    assert one.decks == load_deck_set(f"random:3:{one.deck_secret}").decks
    url = f"sqlite:///{tmp_path}/r.db"
    store = Store(url)
    plan = plan_tournament(spec, catalog, store)
    assert play(plan, store).complete
    data, _, _ = report_outputs(url, tmp_path)
    assert data["decks"]["public"] is False
    assert data["decks"]["reproduce"] == f"random:3:{plan.deck_secret}"
    assert data["decks"]["orders"] == [list(d) for d in plan.decks]


@pytest.mark.parametrize("decks", ["fixed36", "random:2:5", "file", "two"])
def test_reports_mark_public_decks(catalog: Catalog, tmp_path: Path, decks: str) -> None:
    if decks == "file":
        path = tmp_path / "decks.txt"
        path.write_text("8 7 6 5 5 4 4 3 3 2 2 1 1 1 1 1\n", encoding="utf-8")
        decks = f"file:{path}"
    url = f"sqlite:///{tmp_path}/p.db"
    store = Store(url)
    plan = plan_tournament(TournamentSpec(decks=decks, bots=("honest", "uniform")), catalog, store)
    assert plan.public_decks and plan.deck_secret is None
    assert play(plan, store).complete
    data, text, html = report_outputs(url, tmp_path)
    assert data["decks"] == {
        "spec": decks,
        "count": len(plan.decks),
        "public": True,
        "seed": None,
        "reproduce": None,
        "orders": [list(d) for d in plan.decks],
    }
    assert data["status"] == "finished" and data["games"] == len(plan.schedule)
    assert f"Public decks ({decks})" in text and "not ranked play (use balanced:36" in text
    assert "Public decks" in html and "public: a bot could know them in advance" in html


@pytest.mark.slow
def test_a_database_without_the_secrets_table_keeps_working(
    catalog: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    spec = TournamentSpec(decks="random:3:1", bots=("honest", "uniform"))
    plan = plan_tournament(spec, catalog)
    store = Store(url)
    part = play(plan, store, block_size=2, progress=StopAfter(4))
    store.close()
    with sqlite3.connect(path) as db:  # as the previous version of the arena left it
        db.execute("DROP TABLE deck_secrets")
    old = Store(url)
    resumed = plan_resume(old, part.tournament_id, catalog)
    assert resumed.decks == plan.decks and resumed.public_decks
    assert play(resumed, old).complete
    data, _, _ = report_outputs(url, tmp_path)
    assert data["decks"]["public"] is True
    fresh = plan_tournament(TournamentSpec(decks="balanced:2", bots=spec.bots), catalog, old)
    done = play(fresh, old)
    assert done.complete and done.tournament_id != part.tournament_id
    assert old.secret(done.tournament_id) == fresh.deck_secret is not None


# --- the command, interrupted and run again -----------------------------------------------------

COMMAND = [sys.executable, "-c", "from arena.cli.main import main; main()"]
ARGS = ["tournament", "--decks", "balanced:8", "--bots", "honest,uniform,sleeper[seconds=0.01]"]
ARGS += ["--sandbox", "none", "--workers", "2", "--quiet"]


def stored_state(path: Path) -> tuple[int, list[str], list[str], int]:
    """Tournaments, deck orders, secrets and games in the database file at ``path``."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
        tournaments = int(db.execute("select count(*) from tournaments").fetchone()[0])
        decks = [r[0] for r in db.execute("select cards from decks order by position")]
        secrets = [r[0] for r in db.execute("select seed from deck_secrets")]
        games = int(db.execute("select count(*) from games").fetchone()[0])
    return tournaments, decks, secrets, games


@pytest.mark.slow
def test_the_same_command_resumes_on_the_same_secret_decks(spies: None, tmp_path: Path) -> None:
    db = tmp_path / "cmd.db"
    command = [*COMMAND, *ARGS, "--db", f"sqlite:///{db}"]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible
    )
    signal_when_stored(proc, db, 6)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "8 secret decks" in err
    tournaments, decks, secrets, kept = stored_state(db)
    assert (tournaments, len(decks), len(secrets)) == (1, 8, 1)
    assert 6 <= kept < 48

    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"{48 - kept} games played" in again.stderr
    assert stored_state(db) == (1, decks, secrets, 48)

    # a finished tournament run again is found and shown, as with fixed36
    third = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stderr
    assert "tournament 1: 0 games played" in third.stderr
    assert stored_state(db) == (1, decks, secrets, 48)
    assert load_deck_set(f"balanced:8:{secrets[0]}").decks == tuple(
        tuple(int(c) for c in d) for d in decks
    )
