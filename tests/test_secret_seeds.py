"""Every seed a bot is given comes from its tournament's secret (issue 22, item 3).

The attack is ``tests/fixtures/seed_searcher``, a real installed bot package: from its own seed
it searches the public ``--seed`` values, repetitions, deck indices and the publicly listed bot
names until the derivation gives its seed back, and so learns its opponent, the deck's index,
its seat and its opponent's seed. Played through the real ``arena tournament`` command in the
sandbox, it succeeds when the secret is one it can guess (``--secret 0`` derives every seed as
the public ``--seed 0`` did before tournaments had secrets) and learns nothing from a drawn one.
The secret is published once the tournament is finished, and replays it exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from stored_records import stored

from arena.cli.main import cli
from arena.hosting.catalog import load_catalog
from arena.hosting.sandbox import choose_sandbox
from arena.seeds import derive_seed
from arena.tournament.runner import TournamentSpec, plan_tournament, start
from leaderboard.store import Store

#: The field: the searcher and two of the arena's own bots, on secret decks; every fault is
#: kept (the searcher reports through one in every game it decides in).
FIELD = "seedsearch,random,greedy"
TOURNAMENT = ["tournament", "--bots", FIELD, "--decks", "balanced:3", "--max-faults", "0"]
TOURNAMENT += ["--workers", "1", "--quiet"]
FOUND = re.compile(
    r"seedsearch: found opponent=(\S+) deck=(\d+) repeat=(\d+) seed=(\d+) opponent_seed=(\d+)"
)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def searcher(installed: Callable[..., None], bubblewrap: None) -> None:
    """The seed searcher, installed (a third-party bot: it plays in the sandbox)."""
    installed("seed_searcher")


def reports(store: Store, tid: int) -> list[tuple[Any, str]]:
    """The searcher's report in each game it decided in: (the stored game, its message)."""
    found = []
    for game in store.stored_games(tid):
        for fault in game.record.faults:
            if game.record.seats[fault.seat] == "seedsearch" and "seedsearch:" in fault.message:
                found.append((game, fault.message))
    return found


@pytest.mark.slow
def test_the_seed_searcher_names_its_opponent_from_a_guessable_secret_only(
    searcher: None, tmp_path: Path
) -> None:
    # a secret it can guess: every seed derives as the public --seed 0 gave them before
    guessable = f"sqlite:///{tmp_path}/guessable.db"
    done = invoke(*TOURNAMENT, "--secret", "0", "--db", guessable)
    assert done.exit_code == 0, done.output
    store = Store(guessable)
    found = reports(store, 1)
    # at least the six games where it moves first (at seat 1 it may be out before it decides)
    assert len(found) >= 6
    for game, message in found:
        match = FOUND.search(message)
        assert match is not None, message
        opponent, deck, repeat, public, theirs = match.groups()
        seats = game.record.seats
        other = 1 - seats.index("seedsearch")
        assert (opponent, int(deck), int(repeat), int(public)) == (seats[other], game.deck, 0, 0)
        assert int(theirs) == derive_seed(game.record.seed, "bot", other)

    # a drawn secret: the same search finds nothing
    drawn = f"sqlite:///{tmp_path}/drawn.db"
    done = invoke(*TOURNAMENT, "--db", drawn)
    assert done.exit_code == 0, done.output
    store = Store(drawn)
    found = reports(store, 1)
    assert len(found) >= 6
    assert all("seedsearch: found nothing in 20480 tries" in m for _, m in found), found
    secret = store.secret(1)
    assert secret is not None and secret.bit_length() > 64


def test_the_games_seeds_follow_the_secret_not_the_public_seed(catalog: Any) -> None:
    spec = TournamentSpec(decks="random:4:1", bots=("honest", "uniform", "liar"), seed=3)
    one, two = plan_tournament(spec, catalog), plan_tournament(spec, catalog)
    assert one.secret is not None and two.secret is not None and one.secret != two.secret
    assert one.decks == two.decks  # public decks: only the seeds are secret
    seeds = {g.seed for g in one.schedule}
    assert len(seeds) == len(one.schedule)
    assert seeds.isdisjoint(g.seed for g in two.schedule)
    public = {derive_seed(3, "game", g.key) for g in one.schedule}  # before secrets
    assert seeds.isdisjoint(public)
    # the same secret, the same seeds; the public seed only names the tournament
    again = plan_tournament(replace(spec, secret=one.secret), catalog)
    assert again.schedule == one.schedule
    other = plan_tournament(replace(spec, seed=4, secret=one.secret), catalog)
    assert [g.seed for g in other.schedule] == [g.seed for g in one.schedule]
    assert "secret" not in json.dumps(one.configuration)


@pytest.fixture
def catalog(faulty_bots: Path) -> Any:
    return load_catalog(choose_sandbox("none"))


@pytest.mark.slow
def test_the_secret_is_published_once_finished_and_replays_the_tournament(
    faulty_bots: Path, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/t.db"
    args = ["tournament", "--bots", "honest,uniform", "--decks", "fixed36", "--sandbox", "none"]
    args += ["--workers", "1", "--quiet", "--db", url]
    store = Store(url)
    # stored, not played yet: the secret is kept from everything a person reads
    plan = plan_tournament(
        TournamentSpec(decks="fixed36", bots=("honest", "uniform")),
        load_catalog(choose_sandbox("none")),
        store,
    )
    tid = start(plan, store)
    secret = store.secret(tid)
    assert secret == plan.secret is not None
    store.set_status(tid, "interrupted")
    shown = [
        invoke("report", "--json", "--db", url).output,
        invoke("report", "--db", url).output,
        invoke("tournaments", "--json", "--db", url).output,
    ]
    assert json.loads(shown[0])["secret"] is None
    assert "published here once the tournament is finished" in shown[1]
    assert not [text for text in shown if str(secret) in text]

    done = invoke(*args)
    assert done.exit_code == 0, done.output
    data = json.loads(invoke("report", "--json", "--db", url).output)
    assert data["secret"] == str(secret)
    assert data["decks"]["seed"] is None  # public decks: nothing is drawn from the secret
    assert f"secret: {secret} (every game's seed" in invoke("report", "--db", url).output
    # anyone replays the finished tournament from what is published
    replay = f"sqlite:///{tmp_path}/replay.db"
    again = invoke(*args[:-1], replay, "--secret", data["secret"])
    assert again.exit_code == 0, again.output
    assert stored(Store(replay), 1) == stored(store, tid)
    # the same settings with another secret are refused in one line, not mixed
    other = invoke(*args, "--secret", str(secret + 1))
    assert other.exit_code == 2
    assert "stored with another secret" in other.output
    assert len(other.output.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["-1", "x", str(2**128), "1" * 400, "٣"])
def test_a_bad_secret_is_one_line(value: str, tmp_path: Path) -> None:
    done = invoke("tournament", "--secret", value, "--db", f"sqlite:///{tmp_path}/t.db")
    assert done.exit_code == 2
    assert "the secret is a whole number from 0 to 2**128-1" in done.output
    assert "Traceback" not in done.output
