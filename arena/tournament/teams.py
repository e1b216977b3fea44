"""Who plays for whom: the teams of a tournament, so that no table seats two bots of one owner.

A participant who enters several bots could have one *feed* another: lose on purpose to it when
they meet, and lift it in the standings. When the organizer says who owns what (``--teams``,
docs/tournaments.md "Teams"), the schedule leaves out every table that seats two bots of one
team (:func:`arena.tournament.schedule.grown_schedule`), so no game, score or rating comes from
one. A source is:

- ``packages``: the bots of one distribution are one team (each of the arena's own reference
  bots is a team of its own);
- ``owners``: the bots of a distribution a participant of ``arena serve`` submitted are that
  participant's (the database's submission owners), the others as ``packages``;
- a path to a teams file: one team per line, ``TEAM: bot, bot, ...`` (``#`` starts a comment),
  each bot an entrant's name (``montecarlo[playouts=100]``) or a bot's name (every entrant of
  that bot). An entrant the file does not list is a team of its own.

The teams are stored in the tournament's configuration (``{"from": SOURCE, "of": {entrant:
team}}``, entrants of no team left out), so they are part of its fingerprint and a resumed or
grown tournament keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from arena.botspec import split_specs
from arena.errors import ArenaError, printable
from arena.hosting.names import canonical, is_builtin
from leaderboard.store import EntrantInfo, Store

#: The sources that are not a file.
PACKAGES, OWNERS = "packages", "owners"
#: The largest teams file read.
MAX_FILE_BYTES = 1024 * 1024


class TeamsError(ArenaError):
    """Teams that cannot be used as given (one line)."""


def resolve_teams(
    source: str,
    entrants: Sequence[EntrantInfo],
    installed: Sequence[str] = (),
    store: Store | None = None,
) -> dict[str, str]:
    """The team of each of ``entrants`` that has one (entrant name to team), from ``source``
    (:data:`PACKAGES`, :data:`OWNERS` or a teams file's path). ``installed`` are the bot names
    a teams file may name besides the entrants (a file for a whole class may list bots this
    tournament does not enter); ``store`` holds the submission owners. A :class:`TeamsError`
    for a file that cannot be read or holds a mistake, naming its line."""
    if source == PACKAGES:
        return _by_package(entrants)
    if source == OWNERS:
        if store is None:
            raise TeamsError("--teams owners needs the database of the submissions (--db)")
        return _by_owner(entrants, store)
    return _by_file(Path(source), entrants, installed)


def _by_package(entrants: Sequence[EntrantInfo]) -> dict[str, str]:
    return {
        e.name: f"package {canonical(e.distribution)}"
        for e in entrants
        if e.distribution and not is_builtin(e.distribution)
    }


def _by_owner(entrants: Sequence[EntrantInfo], store: Store) -> dict[str, str]:
    from leaderboard import participants as P

    owner = P.distribution_owners(store)
    teams = _by_package(entrants)
    for e in entrants:
        name = owner.get(canonical(e.distribution)) if e.distribution else None
        if name is not None:
            teams[e.name] = f"participant {name}"
    return teams


def _by_file(
    path: Path, entrants: Sequence[EntrantInfo], installed: Sequence[str]
) -> dict[str, str]:
    shown = printable(str(path))
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise TeamsError(
            f"--teams {shown}: not packages, owners or a readable teams file "
            f"({exc.strerror or exc})"
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise TeamsError(f"--teams {shown}: larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TeamsError(f"--teams {shown}: not UTF-8 text") from None
    by_name = {e.name: e for e in entrants}
    by_bot: dict[str, list[str]] = {}
    for e in entrants:
        by_bot.setdefault(e.bot, []).append(e.name)
    known = set(installed)
    teams: dict[str, str] = {}
    where: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.partition("#")[0].strip()
        if not line:
            continue
        at = f"--teams {shown}, line {number}"
        team, colon, members = line.partition(":")
        team = " ".join(team.split())
        if not colon or not team:
            raise TeamsError(f"{at}: expected 'TEAM: bot, bot, ...', got {printable(line)[:80]!r}")
        names = split_specs(members)
        if not names:
            raise TeamsError(f"{at}: team {printable(team)!r} names no bot")
        for item in names:
            if item in by_name:
                found = [item]
            elif item in by_bot:
                found = by_bot[item]
            elif item in known:
                found = []  # installed, not entered here
            else:
                raise TeamsError(f"{at}: {printable(item)[:80]!r} is no installed bot")
            for entrant in found:
                if entrant in teams and teams[entrant] != team:
                    raise TeamsError(
                        f"{at}: {printable(entrant)!r} is in team {printable(teams[entrant])!r} "
                        f"already (line {where[entrant]}); a bot plays for one team"
                    )
                teams[entrant], where[entrant] = team, number
    return teams


def teammates(seats: Sequence[str], teams: Mapping[str, str]) -> bool:
    """Whether two of ``seats`` (entrant names) are of one team."""
    found = [teams[s] for s in seats if s in teams]
    return len(set(found)) < len(found)


def team_sizes(entrants: Sequence[str], teams: Mapping[str, str]) -> list[int]:
    """How many of ``entrants`` each team holds, an entrant of no team a team of one."""
    sizes: dict[str, int] = {}
    alone = 0
    for name in entrants:
        if name in teams:
            sizes[teams[name]] = sizes.get(teams[name], 0) + 1
        else:
            alone += 1
    return [*sizes.values(), *([1] * alone)]


def tables_without_teammates(sizes: Sequence[int], players: int) -> int:
    """How many tables of ``players`` seat no two of one team, the teams of ``sizes`` (the
    elementary symmetric polynomial of the sizes, of degree ``players``)."""
    counts = [1] + [0] * players
    for size in sizes:
        for k in range(players, 0, -1):
            counts[k] += counts[k - 1] * size
    return counts[players]
