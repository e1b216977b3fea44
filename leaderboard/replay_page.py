"""A stored game as one self-contained HTML page that steps through it move by move.

Every state the page shows is computed here, by playing the stored record again through
:mod:`arena.game` (the deck and the actions, with each fault's forfeit where it happened): after
every step the true table and each seat's :class:`~arena.game.Observation`. The page embeds those
states as JSON; its JavaScript only draws the chosen step as the chosen seat saw it, and knows no
rule. A game whose hidden cards may not be shown yet (``hidden``: a secret-deck tournament not
finished) embeds only what every seat saw: public events and the public table, no hand, no deck.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import jinja2

from arena.engine import layout as L
from arena.errors import ArenaError
from arena.game import Card, Event, EventKind, Game, Match, Observation
from arena.referee.records import Fault, GameRecord, MatchRecord

#: Each card's effect in a few words, as printed on the card pictures (two short lines each).
CARD_EFFECTS: dict[Card, tuple[str, str]] = {
    Card.GUARD: ("Name a card: a holder", "of it is out (not Guard)"),
    Card.PRIEST: ("Look at another", "player's hand"),
    Card.BARON: ("Compare hands;", "the lower is out"),
    Card.HANDMAID: ("Protected until", "your next turn"),
    Card.PRINCE: ("A player discards", "and draws again"),
    Card.KING: ("Trade hands with", "another player"),
    Card.COUNTESS: ("Must be played with", "King or Prince"),
    Card.PRINCESS: ("Out if you play", "or discard her"),
}


class ReplayError(ArenaError):
    """A record that does not play again as it was stored."""


@dataclass(frozen=True)
class Step:
    """The table after one step of a round: the deal, an action, or a fault.

    ``events`` is the number of the round's events that had happened by then; ``hands`` the
    true hands, ``set_aside`` the card set aside face down, ``draw_pile`` the cards left to draw
    (top first), and ``observations`` what each seat knew then (with its legal actions when it
    was to move)."""

    round: int
    kind: str
    seat: int | None
    label: str
    opening: bool
    fault: Fault | None
    events: int
    hands: tuple[tuple[Card, ...], ...]
    set_aside: Card
    draw_pile: tuple[Card, ...]
    observations: tuple[Observation, ...]


@dataclass(frozen=True)
class RoundReplay:
    """One round played again: its record, its steps, and the tokens before and after it (a
    match's rounds; empty for a lone round)."""

    record: GameRecord
    steps: tuple[Step, ...]
    tokens_before: tuple[int, ...] = ()
    tokens_after: tuple[int, ...] = ()


def replay_round(record: GameRecord, number: int = 0, game: Game | None = None) -> RoundReplay:
    """Play ``record`` again through the engine and return the table after every step.

    ``number`` is the round's index in its match; ``game`` the round dealt already (by a
    :class:`~arena.game.Match`), else it is dealt from the record. Raises :class:`ReplayError`
    when the record does not play again to the events it stored.
    """
    try:
        if game is None:
            game = Game(record.players, record.variant, deck=record.deck, first=record.first)
        steps = [_step(game, record, number, "deal", None, "the cards are dealt", False, None)]
        pending = sorted(record.faults, key=lambda f: f.move)  # stable: recorded order kept
        for index in range(len(record.actions) + 1):
            while pending and pending[0].move <= index:
                fault = pending.pop(0)
                if not game.over and game.alive[fault.seat]:
                    game.forfeit(fault.seat)
                label = f"{_who(record, fault.seat)}: fault ({fault.kind}): {fault.message}"
                steps.append(_step(game, record, number, "fault", fault.seat, label, False, fault))
            if index == len(record.actions):
                break
            seat, action = record.actions[index]
            if seat != game.turn:
                raise ReplayError(
                    f"action {index + 1} is seat {seat}'s, but seat {game.turn} moves"
                )
            before = len(game.events)
            game.play(action)
            played = next((e for e in game.events[before:] if e.public), None)
            label = played.text(record.seats) if played else f"{_who(record, seat)}: {action}"
            opening = index < record.opening
            steps.append(_step(game, record, number, "move", seat, label, opening, None))
    except ArenaError as exc:
        raise ReplayError(f"the record does not play again: {exc}") from None
    if game.events != record.events or list(game.winners) != list(record.winners):
        differ = next(
            (i for i, (a, b) in enumerate(zip(game.events, record.events, strict=False)) if a != b),
            min(len(game.events), len(record.events)),
        )
        raise ReplayError(
            f"the record does not play again: its event {differ + 1} differs from the engine's"
        )
    return RoundReplay(record, tuple(steps))


def replay_match(match: MatchRecord) -> list[RoundReplay]:
    """Play every round of ``match`` again (:func:`replay_round`), with the tokens each round
    began and ended with as :class:`~arena.game.Match` scores them."""
    if not match.rounds:
        return []
    first = match.rounds[0]
    table = Match(first.players, first.variant, seed=match.seed, first=first.first)
    rounds = []
    for number, record in enumerate(match.rounds):
        before = tuple(table.tokens)
        try:
            game = table.new_round(deck=record.deck)
        except ArenaError as exc:
            raise ReplayError(f"round {number + 1} does not play again: {exc}") from None
        replayed = replay_round(record, number, game)
        table.score_round(game)
        rounds.append(RoundReplay(record, replayed.steps, before, tuple(table.tokens)))
    return rounds


def replay_data(
    record: GameRecord | MatchRecord,
    *,
    game_id: int | None,
    tournament_id: int | None,
    hidden: bool,
    title: str | None = None,
    own_seats: Collection[int] = (),
) -> dict[str, Any]:
    """The JSON the page embeds: every step of every round, ready to draw.

    Each step holds the public table (whose turn, who is in, protected, how many cards each
    seat holds, discards, face-up cards, deck size, the end); unless ``hidden``, also the true
    hands, the set-aside card and the draw pile (``truth``) and each seat's view (``views``:
    hand, what it knows of others' hands and they of its hand, unseen counts, legal actions).
    A step whose bot wrote something while choosing it holds that text (``output``: the
    record's :class:`~arena.referee.records.MoveOutput`, of ``own_seats`` alone when
    ``hidden``). Events carry their text and who saw them; ``hidden`` keeps only public
    events, and, of a ``hidden`` game, the private events and the ``views`` of ``own_seats``
    alone (the seats of the reader's own bots, ``None`` in ``views`` at every other seat).
    """
    own = frozenset(own_seats) if hidden else frozenset()
    rounds = replay_match(record) if isinstance(record, MatchRecord) else [replay_round(record)]
    seats = list(record.seats)
    head = rounds[0].record if rounds else None
    out_rounds: list[dict[str, Any]] = []
    out_steps: list[dict[str, Any]] = []
    for number, replay in enumerate(rounds):
        game = replay.record
        events: list[dict[str, Any]] = []
        start = 0
        said = {
            (o.seat, o.move): o.text for o in game.output if not hidden or o.seat in own
        }  # what a bot wrote choosing a move: beside the move, or beside its fault
        moves = 0
        for step in replay.steps:
            for event in game.events[start : step.events]:
                if hidden and not event.public and own.isdisjoint(event.visible_to or ()):
                    continue
                events.append(_event(event, seats, len(out_steps)))
            start = step.events
            out_steps.append(_step_json(step, hidden, own))
            key = None
            if step.kind == "move":
                key, moves = (step.seat, moves), moves + 1
            elif step.fault is not None:
                key = (step.fault.seat, step.fault.move)
            if key in said:
                out_steps[-1]["output"] = said.pop(key)
        out_rounds.append(
            {
                "number": number + 1,
                "first": game.first,
                "winners": list(game.winners),
                "end_reason": game.end_reason,
                "end_text": next(
                    (e.text(seats) for e in game.events if e.kind == EventKind.ROUND_END), ""
                ),
                "faults": [f.to_json() for f in game.faults],
                "tokens_before": list(replay.tokens_before),
                "tokens_after": list(replay.tokens_after),
                "events": events,
            }
        )
    if title is None:
        kind = "match" if isinstance(record, MatchRecord) else "game"
        where = f"{kind} {game_id}" if game_id is not None else f"a {kind}"
        if tournament_id is not None:
            where += f" of tournament {tournament_id}"
        title = f"{where[0].upper()}{where[1:]}: " + " vs ".join(seats)
    return {
        "title": title,
        "game_id": game_id,
        "tournament_id": tournament_id,
        "hidden": hidden,
        "own_seats": sorted(own),
        "seats": seats,
        "players": len(seats),
        "variant": head.variant if head else "",
        "match": isinstance(record, MatchRecord),
        "match_winner": record.winner if isinstance(record, MatchRecord) else None,
        "cards": {int(c): str(c) for c in Card},
        "rounds": out_rounds,
        "steps": out_steps,
    }


def replay_page_html(
    record: GameRecord | MatchRecord,
    *,
    game_id: int | None,
    tournament_id: int | None,
    hidden: bool,
    title: str | None = None,
    own_seats: Collection[int] = (),
) -> str:
    """One self-contained HTML page (inline CSS, SVG and JavaScript; nothing fetched) that
    steps through ``record`` (a round, or every round of a match) move by move.

    Buttons, the arrow keys (Home and End too) and a slider choose the step; a selector shows
    the table as one seat saw it, or everything. ``hidden`` (a game of a secret-deck tournament
    not finished) leaves out everything some seat did not see: the page then holds only the
    public view, and the views of ``own_seats`` (:func:`replay_data`). Raises
    :class:`ReplayError` when the record does not play again.
    """
    try:
        data = replay_data(
            record,
            game_id=game_id,
            tournament_id=tournament_id,
            hidden=hidden,
            title=title,
            own_seats=own_seats,
        )
    except ReplayError as exc:
        if game_id is None:
            raise
        raise ReplayError(f"game {game_id}: {exc}") from None
    cards = [
        {"value": int(c), "name": str(c), "effect": CARD_EFFECTS[c]} for c in sorted(CARD_EFFECTS)
    ]
    return _environment().from_string(_TEMPLATE).render(data=data, cards=cards)


# --- the states, as the page reads them ------------------------------------------------------


def _who(record: GameRecord, seat: int) -> str:
    return f"seat {seat} ({record.seats[seat]})"


def _step(
    game: Game,
    record: GameRecord,
    number: int,
    kind: str,
    seat: int | None,
    label: str,
    opening: bool,
    fault: Fault | None,
) -> Step:
    top = int(game.state[L.S_TOP])
    return Step(
        round=number,
        kind=kind,
        seat=seat,
        label=label,
        opening=opening,
        fault=fault,
        events=len(game.events),
        hands=tuple(game.hand(s) for s in range(game.players)),
        set_aside=game.deck[0],
        draw_pile=game.deck[top:],
        observations=tuple(game.observation(s) for s in range(game.players)),
    )


def _cards(cards: Sequence[Card | None]) -> list[int | None]:
    return [None if c is None else int(c) for c in cards]


def _step_json(step: Step, hidden: bool, own: frozenset[int] = frozenset()) -> dict[str, Any]:
    seen = step.observations[0]  # the public facts are the same in every seat's view
    players = len(step.hands)
    data: dict[str, Any] = {
        "round": step.round,
        "kind": step.kind,
        "seat": step.seat,
        "label": step.label,
        "opening": step.opening,
        "fault": None if step.fault is None else step.fault.to_json(),
        "table": {
            "turn": seen.turn,
            "alive": list(seen.alive),
            "protected": list(seen.protected),
            "hand_counts": [len(h) for h in step.hands],
            "discards": [[int(c) for c in seen.discards(s)] for s in range(players)],
            "discard_totals": list(seen.discard_totals),
            "face_up": _cards(seen.face_up),
            "deck_size": seen.deck_size,
            "set_aside_taken": seen.set_aside_taken,
            "end_reason": seen.end_reason,
            "winners": list(seen.winners),
        },
    }
    if hidden and own:
        data["views"] = [
            _view(o) if seat in own else None for seat, o in enumerate(step.observations)
        ]
    if not hidden:
        data["truth"] = {
            "hands": [_cards(h) for h in step.hands],
            "set_aside": int(step.set_aside),
            "draw_pile": _cards(step.draw_pile),
        }
        data["views"] = [_view(o) for o in step.observations]
    return data


def _view(o: Observation) -> dict[str, Any]:
    return {
        "hand": _cards(o.hand),
        "known": _cards(o.known),
        "known_by": _cards(o.known_by),
        "unseen": list(o.unseen),
        "legal_actions": [str(a) for a in o.legal_actions],
    }


def _event(event: Event, seats: Sequence[str], step: int) -> dict[str, Any]:
    return {
        "text": event.text(seats),
        "visible_to": None if event.visible_to is None else list(event.visible_to),
        "step": step,
    }


def _environment() -> jinja2.Environment:
    """Autoescaping always on: bot names and fault messages are untrusted."""
    return jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ data.title }}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222;
  max-width: 80rem; margin: 1rem auto; padding: 0 1rem; line-height: 1.35; }
h1 { font-size: 1.4rem; margin: 0 0 .2rem; }
h2 { font-size: 1rem; margin: 0 0 .4rem; }
.sub { color: #555; margin: 0 0 .6rem; }
.controls { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; padding: .5rem;
  background: #f4f4f4; border-radius: .4rem; }
.controls button { font-size: 1rem; min-width: 2.4rem; padding: .2rem .5rem; cursor: pointer; }
.controls input[type=range] { flex: 1 1 12rem; }
#position { font-variant-numeric: tabular-nums; min-width: 8rem; }
.banner { margin: .6rem 0; }
.banner div { padding: .35rem .7rem; border-radius: .4rem; background: #eef3fb; }
.banner div + div { margin-top: .25rem; }
.banner .fault { background: #f8d0cc; font-weight: 600; }
.banner .end { background: #d9f0d3; font-weight: 600; }
.banner .opening { background: #fff3c4; }
.banner .output { background: #f4f4f4; }
.banner .output pre { margin: .2rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere;
  max-height: 12rem; overflow-y: auto; }
.layout { display: grid; grid-template-columns: minmax(0, 1fr) 24rem; gap: 1rem; }
@media (max-width: 60rem) { .layout { grid-template-columns: 1fr; } }
.centre { display: flex; flex-wrap: wrap; gap: 1.2rem; align-items: flex-start; padding: .6rem;
  background: #2f6b46; color: #fff; border-radius: .5rem; }
.centre .pile { text-align: center; font-size: .8rem; }
.centre .pile .cards { display: flex; gap: .2rem; justify-content: center; }
#deck-count { font-size: 1.1rem; font-weight: 700; }
.seats { display: grid; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); gap: .7rem;
  margin-top: .7rem; }
.seat { border: 2px solid #ccc; border-radius: .5rem; padding: .5rem; background: #fff; }
.seat.turn { border-color: #2a6fdb; box-shadow: 0 0 0 2px #cfe0fb; }
.seat.out { background: #f1f1f1; color: #777; }
.seat.out .hand { opacity: .45; }
.seat.winner { border-color: #2e8b3d; background: #eefaea; }
.seat .name { font-weight: 700; overflow-wrap: anywhere; }
.badge { display: inline-block; font-size: .72rem; padding: 0 .4rem; border-radius: .6rem;
  margin-left: .25rem; background: #e5e5e5; color: #222; font-weight: 600; }
.badge.turn { background: #cfe0fb; } .badge.protected { background: #fff0b3; }
.badge.out { background: #f3c4bf; } .badge.winner { background: #bfe6b8; }
.row { display: flex; flex-wrap: wrap; gap: .25rem; align-items: flex-end; margin: .35rem 0; }
.label { font-size: .75rem; color: #666; width: 100%; }
.card { display: inline-flex; flex-direction: column; align-items: center; position: relative; }
.card svg { width: 64px; height: 90px; display: block; }
.card.small svg { width: 34px; height: 48px; }
.card.known svg { outline: 3px dashed #2a6fdb; outline-offset: 1px; border-radius: 6px; }
.card .note { font-size: .68rem; color: #2a6fdb; font-weight: 600; }
.centre .card .note, .centre .label { color: #e6f2e9; }
.info { font-size: .8rem; color: #444; margin: .2rem 0; }
.info ul { margin: .1rem 0; padding-left: 1.1rem; }
.empty { font-size: .8rem; color: #888; font-style: italic; }
aside { min-width: 0; }
#log { position: relative; margin: 0; padding: 0 0 0 2.2rem; max-height: 75vh; overflow-y: auto;
  font-size: .83rem; border: 1px solid #ddd; border-radius: .4rem; background: #fff; }
#log li { padding: .12rem .3rem; cursor: pointer; }
#log li.future { color: #aaa; }
#log li.current { background: #ffe58a; color: #000; font-weight: 600; }
#log li.private { font-style: italic; }
#log li .seen { color: #2a6fdb; font-size: .75rem; }
.muted { color: #777; }
.unseen { display: flex; flex-wrap: wrap; column-gap: .6rem; }
.unseen span { white-space: nowrap; }
</style>
</head>
<body>
<svg width="0" height="0" style="position: absolute" aria-hidden="true">
  <defs>
    <pattern id="back-pattern" width="10" height="10" patternUnits="userSpaceOnUse"
      patternTransform="rotate(45)">
      <rect width="10" height="10" fill="#7a2331"/><rect width="4" height="10" fill="#8f3040"/>
    </pattern>
  </defs>
  <symbol id="card-back" viewBox="0 0 100 140">
    <rect x="2" y="2" width="96" height="136" rx="9" fill="url(#back-pattern)" stroke="#3b0f17"
      stroke-width="3"/>
    <rect x="14" y="14" width="72" height="112" rx="6" fill="none" stroke="#e8c77a"
      stroke-width="2"/>
    <text x="50" y="78" font-size="30" text-anchor="middle" fill="#e8c77a">&#9829;</text>
  </symbol>
{% for card in cards %}
  <symbol id="card-{{ card.value }}" viewBox="0 0 100 140">
    <rect x="2" y="2" width="96" height="136" rx="9" fill="#fbf6ea" stroke="#5a4632"
      stroke-width="3"/>
    <rect x="8" y="8" width="84" height="70" rx="5" fill="hsl({{ card.value * 40 }}, 45%, 80%)"/>
    <text x="15" y="28" font-size="20" font-weight="700" fill="#3a2a1a">{{ card.value }}</text>
    <text x="50" y="66" font-size="38" font-weight="700" text-anchor="middle"
      fill="#3a2a1a">{{ card.value }}</text>
    <text x="50" y="96" font-size="14" font-weight="700" text-anchor="middle"
      fill="#3a2a1a">{{ card.name }}</text>
{% for line in card.effect %}
    <text x="50" y="{{ 112 + 11 * loop.index0 }}" font-size="8" text-anchor="middle"
      fill="#3a2a1a">{{ line }}</text>
{% endfor %}
  </symbol>
{% endfor %}
</svg>
<h1>{{ data.title }}</h1>
<p class="sub">
{% for name in data.seats %}
seat {{ loop.index0 }}: {{ name }}{{ ";" if not loop.last }}
{% endfor %}
&middot; variant {{ data.variant }}
{% if data.match %} &middot; a match of {{ data.rounds|length }} rounds{% endif %}
{% if data.hidden %} &middot; <strong>secret decks not shown yet: only what every
seat saw{% if data.own_seats %}, and what your bot's seat saw{% endif %}</strong>{% endif %}</p>
<div class="controls">
  <button id="first" type="button" title="First step (Home)">|&#9664;</button>
  <button id="prev" type="button" title="Previous step (left arrow)">&#9664;</button>
  <input id="slider" type="range" min="0" max="{{ data.steps|length - 1 }}" value="0"
    aria-label="step">
  <button id="next" type="button" title="Next step (right arrow)">&#9654;</button>
  <button id="last" type="button" title="Last step (End)">&#9654;|</button>
  <span id="position"></span>
  <label>View <select id="view"></select></label>
</div>
<div id="banner" class="banner" aria-live="polite"></div>
<div class="layout">
  <section>
    <div id="round" class="info"></div>
    <div class="centre" id="centre"></div>
    <div class="seats" id="seats"></div>
  </section>
  <aside>
    <h2>Log</h2>
    <ol id="log"></ol>
  </aside>
</div>
<script type="application/json" id="replay-data">{{ data|tojson }}</script>
<script>
"use strict";
(function () {
  // Draws the step and view chosen; every state was computed by the arena and is read here.
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const steps = data.steps;
  const slider = document.getElementById("slider");
  const viewSelect = document.getElementById("view");
  let index = 0;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function who(seat) { return "seat " + seat + " (" + data.seats[seat] + ")"; }
  function cardName(value) { return data.cards[value]; }

  function card(value, options) {
    const opts = options || {};
    const wrap = el("span", "card" + (opts.small ? " small" : "") + (opts.known ? " known" : ""));
    wrap.dataset.card = value === null ? "back" : String(value);
    wrap.title = value === null ? "face down" : value + " " + cardName(value);
    wrap.setAttribute("role", "img");
    wrap.setAttribute("aria-label", wrap.title);
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 100 140");
    const use = document.createElementNS(NS, "use");
    use.setAttribute("href", "#card-" + (value === null ? "back" : value));
    svg.appendChild(use);
    wrap.appendChild(svg);
    if (opts.note) wrap.appendChild(el("span", "note", opts.note));
    return wrap;
  }

  const views = [];
  if (data.hidden) {
    views.push(["public", "What every seat saw"]);
    data.own_seats.forEach(function (seat) {
      views.push([String(seat), "As " + who(seat) + " saw it (your bot)"]);
    });
  } else {
    views.push(["all", "Everything"]);
    data.seats.forEach(function (name, seat) {
      views.push([String(seat), "As " + who(seat) + " saw it"]);
    });
  }
  views.forEach(function (v) {
    const option = el("option", "", v[1]);
    option.value = v[0];
    viewSelect.appendChild(option);
  });

  function pile(title, cards, extra) {
    const box = el("div", "pile");
    box.appendChild(el("div", "label", title));
    const row = el("div", "cards");
    cards.forEach(function (c) { row.appendChild(c); });
    box.appendChild(row);
    if (extra) box.appendChild(extra);
    return box;
  }

  function drawCentre(step, view) {
    const t = step.table;
    const centre = document.getElementById("centre");
    centre.replaceChildren();
    const count = el("div", "", "");
    const number = el("span", "", String(t.deck_size));
    number.id = "deck-count";
    count.append(number, document.createTextNode(" left"));
    centre.appendChild(pile("Deck", t.deck_size ? [card(null)] : [], count));
    let aside;
    if (view === "all") {
      aside = card(step.truth.set_aside, { note: t.set_aside_taken ? "drawn" : "" });
    } else {
      aside = card(null, { note: t.set_aside_taken ? "drawn" : "" });
    }
    aside.id = "set-aside";
    centre.appendChild(pile("Set aside", [aside]));
    if (t.face_up.length) {
      centre.appendChild(pile("Face up", t.face_up.map(function (c) { return card(c); })));
    }
    if (view === "all") {
      const draws = step.truth.draw_pile.map(function (c) { return card(c, { small: true }); });
      const box = pile("Draw pile, top first", draws);
      box.id = "draw-pile";
      centre.appendChild(box);
    }
  }

  function handOf(step, view, seat) {
    const t = step.table;
    if (view === "all") return step.truth.hands[seat].map(function (c) { return card(c); });
    if (view === "public") {
      return Array.from({ length: t.hand_counts[seat] }, function () { return card(null); });
    }
    const me = Number(view);
    const mine = step.views[me];
    if (seat === me) return mine.hand.map(function (c) { return card(c); });
    const cards = [];
    const known = mine.known[seat];
    for (let i = 0; i < t.hand_counts[seat]; i++) {
      if (i === 0 && known !== null) cards.push(card(known, { known: true, note: "known" }));
      else cards.push(card(null));
    }
    return cards;
  }

  function drawSeats(step, view, round) {
    const t = step.table;
    const box = document.getElementById("seats");
    box.replaceChildren();
    data.seats.forEach(function (name, seat) {
      const over = t.end_reason !== null;
      const panel = el("div", "seat");
      panel.dataset.seat = String(seat);
      if (!over && t.turn === seat) panel.classList.add("turn");
      if (!t.alive[seat]) panel.classList.add("out");
      if (over && t.winners.includes(seat)) panel.classList.add("winner");
      const head = el("div", "");
      head.appendChild(el("span", "name", "Seat " + seat + ": " + name));
      if (!over && t.turn === seat) head.appendChild(el("span", "badge turn", "to move"));
      if (t.protected[seat]) {
        head.appendChild(el("span", "badge protected", "protected (Handmaid)"));
      }
      if (!t.alive[seat]) head.appendChild(el("span", "badge out", "out"));
      if (over && t.winners.includes(seat)) {
        head.appendChild(el("span", "badge winner", "wins the round"));
      }
      if (data.match) head.appendChild(el("span", "badge", "tokens " + round.tokens_before[seat]));
      panel.appendChild(head);
      const hand = el("div", "row hand");
      hand.appendChild(el("span", "label", "Hand"));
      const cards = handOf(step, view, seat);
      if (cards.length) cards.forEach(function (c) { hand.appendChild(c); });
      else hand.appendChild(el("span", "empty", "no cards"));
      panel.appendChild(hand);
      const discards = el("div", "row discards");
      discards.appendChild(el("span", "label", "Discards (total " + t.discard_totals[seat] + ")"));
      t.discards[seat].forEach(function (c) { discards.appendChild(card(c, { small: true })); });
      if (!t.discards[seat].length) discards.appendChild(el("span", "empty", "none"));
      panel.appendChild(discards);
      if (view !== "all" && view !== "public" && Number(view) === seat) {
        panel.appendChild(knowledge(step.views[seat], seat));
      }
      box.appendChild(panel);
    });
  }

  function knowledge(mine, seat) {
    const info = el("div", "info knowledge");
    const facts = el("ul", "");
    mine.known.forEach(function (c, other) {
      if (other !== seat && c !== null) {
        facts.appendChild(el("li", "", "knows " + who(other) + " holds " + cardName(c)));
      }
    });
    mine.known_by.forEach(function (c, other) {
      if (other !== seat && c !== null) {
        facts.appendChild(el("li", "", who(other) + " knows it holds " + cardName(c)));
      }
    });
    if (mine.legal_actions.length) {
      facts.appendChild(el("li", "", "may play: " + mine.legal_actions.join(", ")));
    }
    if (facts.children.length) info.appendChild(facts);
    const unseen = el("div", "unseen", "Not seen yet: ");
    mine.unseen.forEach(function (n, i) {
      if (n) unseen.appendChild(el("span", "", cardName(i + 1) + " \u00d7" + n));
    });
    info.appendChild(unseen);
    return info;
  }

  function drawBanner(step, round) {
    const banner = document.getElementById("banner");
    banner.replaceChildren();
    const t = step.table;
    let text = step.label;
    let kind = "step";
    if (step.kind === "fault") {
      kind = "fault";
      text = "Fault: " + who(step.fault.seat) + ": " + step.fault.kind + ": " + step.fault.message;
      text += t.alive[step.fault.seat] ? "" : " \\u2014 its seat is out of the round";
    } else if (step.opening) {
      kind = "opening";
      text += " (an opening move given, not chosen by the bot)";
    }
    banner.appendChild(el("div", kind, text));
    if (step.output) {
      const said = el("div", "output", "");
      said.appendChild(el("span", "label", who(step.seat) + " wrote, choosing this move:"));
      said.appendChild(el("pre", "", step.output));
      banner.appendChild(said);
    }
    if (t.end_reason !== null) {
      banner.appendChild(el("div", "end", round.end_text));
      if (data.match && step === lastOfRound(step.round)) {
        let line = "tokens after this round: " + round.tokens_after.join(" : ");
        if (round.number === data.rounds.length && data.match_winner !== null) {
          line += " \\u2014 " + who(data.match_winner) + " wins the match";
        }
        banner.appendChild(el("div", "end", line));
      }
    }
  }

  function lastOfRound(r) {
    let last = null;
    steps.forEach(function (s) { if (s.round === r) last = s; });
    return last;
  }

  function drawLog(view, round) {
    const log = document.getElementById("log");
    log.replaceChildren();
    let current = null;
    round.events.forEach(function (ev) {
      const seen = ev.visible_to;
      const seat = Number(view);
      if (view !== "all" && view !== "public" && seen !== null && !seen.includes(seat)) return;
      if (view === "public" && seen !== null) return;
      const item = el("li", "", ev.text);
      item.dataset.step = String(ev.step);
      if (seen !== null) {
        item.classList.add("private");
        const seers = seen.map(function (s) { return "seat " + s; }).join(", ");
        item.appendChild(el("span", "seen", " [seen by " + seers + "]"));
      }
      if (ev.step === index) {
        item.classList.add("current");
        if (current === null) current = item;
      } else if (ev.step > index) {
        item.classList.add("future");
      }
      item.addEventListener("click", function () { go(ev.step); });
      log.appendChild(item);
    });
    if (current !== null) log.scrollTop = Math.max(0, current.offsetTop - log.clientHeight / 3);
  }

  function draw() {
    const step = steps[index];
    const view = viewSelect.value;
    const round = data.rounds[step.round];
    slider.value = String(index);
    document.getElementById("position").textContent = "step " + (index + 1) + " of " + steps.length;
    const roundLine = document.getElementById("round");
    roundLine.textContent = data.match
      ? "Round " + round.number + " of " + data.rounds.length +
        " (tokens " + round.tokens_before.join(" : ") + " before it)"
      : "";
    drawBanner(step, round);
    drawCentre(step, view);
    drawSeats(step, view, round);
    drawLog(view, round);
  }

  function go(to) {
    index = Math.max(0, Math.min(steps.length - 1, to));
    draw();
  }

  document.getElementById("first").addEventListener("click", function () { go(0); });
  document.getElementById("prev").addEventListener("click", function () { go(index - 1); });
  document.getElementById("next").addEventListener("click", function () { go(index + 1); });
  document.getElementById("last").addEventListener("click", function () { go(steps.length - 1); });
  slider.addEventListener("input", function () { go(Number(slider.value)); });
  viewSelect.addEventListener("change", draw);
  document.addEventListener("keydown", function (event) {
    const tag = event.target && event.target.tagName;
    if (tag === "SELECT" || tag === "INPUT") return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: steps.length - 1 };
    if (event.key in moves) {
      event.preventDefault();
      go(moves[event.key]);
    }
  });
  draw();
})();
</script>
</body>
</html>
"""
