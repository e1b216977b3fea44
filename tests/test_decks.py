"""Deck sets: fixed36 (reproducible, balanced), random:N[:SEED], file:PATH, plugin sets, CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.catalog import Catalog, DeckSetEntry
from arena.cli import cli
from arena.decks import (
    BAND,
    DeckSet,
    DeckSetError,
    default_fixed36_path,
    fixed36_text,
    load_deck_set,
    openings,
    passes_criterion,
    set_aside_quota,
)
from arena.errors import ArenaError
from arena.game.deck import check_deck
from arena.game.variants import VARIANTS

BASE = [8, 7, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1]


@pytest.fixture(scope="module")
def table():
    return openings()


def test_generating_again_reproduces_the_shipped_file():
    assert fixed36_text() == default_fixed36_path().read_text(encoding="utf-8")


def test_generate_command_writes_the_same_file(tmp_path: Path):
    out = tmp_path / "f.txt"
    result = CliRunner().invoke(cli, ["decks", "generate", "fixed36", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == default_fixed36_path().read_text(encoding="utf-8")


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_fixed36_decks_are_valid_and_balanced(variant: str, table):
    deck_set = load_deck_set("fixed36", variant)
    assert isinstance(deck_set, DeckSet)
    assert deck_set.variant == variant
    assert len(deck_set.decks) == 36
    assert len(set(deck_set.decks)) == 36
    for deck in deck_set.decks:
        assert len(deck) == 16
        check_deck(deck, variant)
        assert passes_criterion(deck, table)
        for a, b in ((deck[1], deck[3]), (deck[2], deck[3])):
            f = table.of(a, b)
            assert abs(f - table.mean) <= BAND
            assert f < 1.0
    aside = Counter(d[0] for d in deck_set.decks)
    for value, (lo, hi) in set_aside_quota().items():
        assert lo <= aside[value] <= hi
    assert set_aside_quota()[1] == (11, 12)
    assert set_aside_quota()[2] == (4, 5)
    assert set_aside_quota()[8] == (2, 3)


def test_criterion_rejects_decisive_starts(table):
    # Seat 0 holds Baron and draws Princess: a certain win.
    assert table.of(3, 8) == 1.0
    assert not passes_criterion([1, 3, 2, 8, 1, 1, 1, 1, 2, 3, 4, 4, 5, 5, 6, 7], table)
    # Seat 1's card with the draw would be decisive (Baron + Countess).
    assert not passes_criterion([1, 1, 3, 7, 1, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 8], table)


def test_random_is_deterministic_and_valid():
    a = load_deck_set("random:5:7")
    b = load_deck_set("random:5:7")
    assert a == b
    assert a.name == "random:5:7"
    assert len(a.decks) == 5
    assert load_deck_set("random:5") == load_deck_set("random:5:0")
    assert load_deck_set("random:5:8").decks != a.decks
    assert load_deck_set("random:3:7").decks == a.decks[:3]
    for deck in a.decks:
        check_deck(deck, "classic")


@pytest.mark.parametrize(
    "spec", ["nope", "random:0", "random:x", "random:", "random:3:y", "random:1:2:3", "file:"]
)
def test_bad_specs_raise_arena_errors(spec: str):
    with pytest.raises(DeckSetError) as info:
        load_deck_set(spec)
    assert isinstance(info.value, ArenaError)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path: Path):
    with pytest.raises(DeckSetError, match="does not exist"):
        load_deck_set(f"file:{tmp_path / 'none.txt'}")


def test_file_with_comments_names_and_values(tmp_path: Path):
    path = tmp_path / "decks.txt"
    names = "Princess, Countess, King, Prince, Prince, Maid, Handmaid, Baron, Baron, "
    names += "Priest, Priest, Guard, Guard, Guard, Guard, Guard"
    path.write_text(
        "# my decks\n\n"
        + ",".join(str(v) for v in BASE)
        + "   # values with commas\n"
        + " ".join(str(v) for v in reversed(BASE))
        + "\n"
        + names
        + "\n",
        encoding="utf-8",
    )
    deck_set = load_deck_set(f"file:{path}", "huibers")
    assert deck_set.decks == (tuple(BASE), tuple(reversed(BASE)), tuple(BASE))
    assert deck_set.variant == "huibers"
    assert all(type(v) is int for v in deck_set.decks[0])


def test_bad_line_names_file_and_line(tmp_path: Path):
    path = tmp_path / "decks.txt"
    bad = [1, *BASE[1:-1], 1]  # a Princess swapped for a sixth Guard
    path.write_text(
        "# header\n" + " ".join(map(str, BASE)) + "\n" + " ".join(map(str, bad)) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(DeckSetError) as info:
        load_deck_set(f"file:{path}")
    message = str(info.value)
    assert message.startswith(f"deck file {path} line 3: not a deck of the variant's cards")
    assert "too many Guard" in message
    assert "\n" not in message

    path.write_text("Guard Bishop\n", encoding="utf-8")
    with pytest.raises(DeckSetError, match=r"line 1: bad deck: unknown card 'Bishop'"):
        load_deck_set(f"file:{path}")

    path.write_text("# nothing\n\n", encoding="utf-8")
    with pytest.raises(DeckSetError, match="holds no decks"):
        load_deck_set(f"file:{path}")


def test_plugin_deck_set():
    catalog = Catalog()
    catalog.deck_sets["mine"] = DeckSetEntry("mine", "one deck", {"classic": [BASE]}, "plug")
    deck_set = load_deck_set("mine", "classic", catalog)
    assert deck_set.decks == (tuple(BASE),)
    assert deck_set.description == "one deck"
    with pytest.raises(DeckSetError, match="no decks for variant 'huibers'"):
        load_deck_set("mine", "huibers", catalog)
    catalog.deck_sets["bad"] = DeckSetEntry("bad", "", {"classic": [BASE[:-1]]}, "plug")
    with pytest.raises(DeckSetError, match="deck 1: not a deck"):
        load_deck_set("bad", "classic", catalog)
    with pytest.raises(DeckSetError, match=r"known: .*mine"):
        load_deck_set("other", "classic", catalog)


def test_cli_show_json_shape():
    result = CliRunner().invoke(cli, ["decks", "show", "fixed36", "--json", "--variant", "huibers"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["name"] == "fixed36"
    assert data["variant"] == "huibers"
    assert len(data["decks"]) == 36
    assert all(len(d) == 16 for d in data["decks"])
    figures = data["balance"]
    assert figures["passing"] == 36
    for seat in ("seat0", "seat1"):
        assert set(figures[seat]) == {"mean", "sd", "min", "max"}
        assert figures["band"][0] <= figures[seat]["min"] <= figures[seat]["max"]
        assert figures[seat]["max"] <= figures["band"][1]
    assert sum(figures["set_aside"].values()) == 36
    assert len(figures["openings"]) == 36


def test_cli_show_text():
    result = CliRunner().invoke(cli, ["decks", "show", "random:3:1"])
    assert result.exit_code == 0, result.output
    assert "set aside:" in result.output
    assert "seat0: mean" in result.output


@pytest.mark.parametrize("spec", ["random:0", "random:x", "file:/no/such/decks.txt"])
def test_cli_bad_spec_exits_2_with_one_line(spec: str):
    result = CliRunner().invoke(cli, ["decks", "show", spec])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("arena: error: ")
    assert "Traceback" not in result.output


def test_cli_bad_deck_file_exits_2(tmp_path: Path):
    path = tmp_path / "decks.txt"
    path.write_text("1 2 3\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["decks", "show", f"file:{path}"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"arena: error: deck file {path} line 1: not a deck of the variant's cards: "
        "3 cards instead of 16; too few Guard, Priest, Baron, Handmaid, Prince, King, "
        "Countess, Princess"
    )
