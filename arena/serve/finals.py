"""The end of a competition (``arena serve finish``): frozen, its ladder stopped, a final
round-robin of every ranked player on fresh secret decks, and that tournament's report written
where the server shows it (``/final``): the published result, which shows each fault's kind and
none of its messages (docs/serve.md, "Private output")."""

from __future__ import annotations

import hashlib
import re
import subprocess
from dataclasses import replace
from pathlib import Path

from arena.errors import ArenaError
from arena.hosting import submissions
from arena.serve.background import ARENA, spawn
from arena.serve.ladder import LadderSettings, ladder_tournaments, new_seed
from arena.serve.pages import ranked_players, ranked_rows
from arena.serve.standings import refresh_standings
from leaderboard import competition as C
from leaderboard.store import Store


def report_path(name: str) -> Path:
    """Where the final report of competition ``name`` is kept for the server to show."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:60] or "competition"
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return submissions.root() / "reports" / f"{slug}-{digest}.html"


def finalists(store: Store, settings: LadderSettings) -> list[str]:
    """Who plays the final round-robin: every ranked player of the latest standings (each
    participant's voice, ``NAME@VERSION``, and the reference bots), best first: one bot per
    participant, so no table of it seats two of one participant's bots. A voice with no rated
    game yet (its placement could not be played: its opponent was withdrawn) plays it too, last."""
    latest = refresh_standings(store, settings)
    rows = [] if latest is None else [r for r in latest.standings if r.get("games")]
    voices = ranked_players(store)
    current, _ = ranked_rows(rows, voices)
    players = [str(r["bot"]) for r in current]
    return players + sorted(voices - set(players))


def _final(store: Store, settings: LadderSettings) -> list[tuple[int, str, str]]:
    """The competition's final round-robin, if it was started: ``[(id, name, status)]``."""
    return [t for t in store.tournament_names(settings.final_name) if t[1] == settings.final_name]


def finish_competition(
    store: Store, name: str, decks: int, play: list[str], report: Path | None = None
) -> Path:
    """Freeze competition ``name``, stop its ladder, play (or resume) its final round-robin on
    ``decks`` fresh secret decks with the ``arena tournament`` options ``play``, record it once
    finished (the competition is finished from then on: its decks are shown), and write its
    report to ``report`` (default :func:`report_path`); the report's path."""
    settings = LadderSettings(name)
    stored = _final(store, settings)
    if stored:
        command = ["--resume", str(stored[0][0])]
    else:
        players = finalists(store, settings)
        if len(players) < 2:
            raise ArenaError(
                f"competition {name!r} has {len(players)} ranked player(s): a final round-robin "
                "needs two"
            )
        ladder = ladder_tournaments(store, settings)
        variant = store.tournament(ladder[-1][0]).variant if ladder else "classic"
        command = [
            *("--name", settings.final_name, "--seed", new_seed()),
            *("--decks", f"balanced:{decks}"),
            *("--variant", variant, "--bots", ",".join(players)),
            *("--teams", "owners"),
        ]
    C.set_competition(store, replace(C.competition(store, name), frozen=True, final=True))
    code = spawn([*ARENA, "tournament", *command, *play, "--db", store.url]).wait()
    found = _final(store, settings)
    if code != 0 or not found or found[0][2] != "finished":
        raise ArenaError(
            f"the final round-robin of {name!r} did not finish (arena tournament exited {code}): "
            "run arena serve finish again to resume it"
        )
    C.set_competition(store, replace(C.competition(store, name), final_tournament_id=found[0][0]))
    where = report or report_path(name)
    where.parent.mkdir(parents=True, exist_ok=True)
    tournament = str(found[0][0])
    command = ["report", "--tournament", tournament, "--html", str(where), "--pages", "none"]
    command += ["--no-fault-messages"]  # a published report: what a bot said is its author's
    command += ["--db", store.url]
    code = spawn([*ARENA, *command], stdout=subprocess.DEVNULL).wait()
    if code != 0:
        raise ArenaError(f"arena report exited {code}: the final report was not written")
    return where
