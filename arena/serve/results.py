"""A competition's results as an organizer grades them: each participant with its ranked bot,
version, rank, rating and interval, games and score, and the participants with no ranked bot
(``arena serve results``, ``/results.csv``; docs/serve.md "Results and grading").

While the competition runs, the results are the ladder's latest standings (what the leaderboard
shows); once its final round-robin is finished, they are that tournament's standings, the
published result."""

from __future__ import annotations

import csv
import io
from typing import Any

from arena.serve.ladder import LadderSettings
from arena.serve.pages import leaderboard_json, submitted
from leaderboard import competition as C
from leaderboard import participants as P
from leaderboard.standings import compute_standings
from leaderboard.store import Store

#: The columns of :func:`results_csv`, in order.
COLUMNS = (
    "participant",
    "bot",
    "version",
    "rank",
    "elo",
    "elo_lo",
    "elo_hi",
    "games",
    "score",
    "score_lo",
    "score_hi",
    "status",
)


def results(store: Store, settings: LadderSettings) -> dict[str, Any]:
    """``{"source": "ladder" | "final", "tournament": id or None, "rows": [...]}``: a row per
    ranked player (reference bots with no participant), best first, then one per participant
    (not removed) with no ranked bot, its ``status`` saying why (``not submitted``, or its
    latest upload's status)."""
    state = C.competition(store, settings.name)
    if state.final_tournament_id is not None:
        source, tournament = "final", state.final_tournament_id
        rows = _final_rows(store, tournament)
    else:
        source, tournament = "ladder", None
        rows = [_row(r, "ranked") for r in leaderboard_json(store, settings)["standings"]]
    shown = {r["participant"] for r in rows if r["participant"]}
    latest: dict[int, str] = {}
    for found in P.uploads(store):
        latest[found.participant_id] = found.status
    for p in P.participants(store, removed=False):
        if p.name not in shown:
            status = latest.get(p.id, "not submitted")
            rows.append({**dict.fromkeys(COLUMNS), "participant": p.name, "status": status})
    return {"source": source, "tournament": tournament, "rows": rows}


def _row(row: dict[str, Any], status: str) -> dict[str, Any]:
    """A standings row as a results row."""
    found = submitted(str(row["bot"]))
    out = {column: row.get(column) for column in COLUMNS}
    out["bot"] = found[0] if found else row["bot"]
    out["version"] = found[1] if found else "reference"
    out["status"] = status
    return out


def _final_rows(store: Store, tournament_id: int) -> list[dict[str, Any]]:
    """The final round-robin's standings as results rows, each naming its participant."""
    detail = store.tournament(tournament_id)
    standings = compute_standings(store.stored_games(tournament_id), detail.entrants)
    names = {p.id: p.name for p in P.participants(store)}
    owner = P.owners(store)
    rows = []
    for line in standings.standings:
        row: dict[str, Any] = dict(line.to_dict())
        row["participant"] = names.get(owner[line.bot]) if line.bot in owner else None
        rows.append(_row(row, "final"))
    return rows


def results_csv(found: dict[str, Any]) -> str:
    """:func:`results` as CSV text with a header line (:data:`COLUMNS`); empty cells for what a
    row lacks."""
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in found["rows"]:
        writer.writerow({k: "" if row.get(k) is None else _cell(row[k]) for k in COLUMNS})
    return out.getvalue()


def _cell(value: Any) -> str:
    """A cell: numbers as they are (ratings to one decimal), text with no leading character a
    spreadsheet would read as a formula."""
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 2 else f"{value:.1f}"
    if not isinstance(value, str):
        return str(value)
    return "'" + value if value[:1] in ("=", "+", "-", "@") else value
