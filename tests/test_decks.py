"""Deck sets: fixed36 (reproducible, balanced), balanced:N[:SEED], random:N[:SEED], file:PATH,
plugin sets, secret specs, CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import cli
from arena.decks.sets import (
    BAND,
    DeckSet,
    default_fixed36_path,
    fixed36_text,
    generate_balanced,
    load_deck_set,
    openings,
    passes_criterion,
    set_aside_quota,
)
from arena.decks.specs import (
    SECRET_BITS,
    DeckSetError,
    draw_secret_seed,
    is_builtin_spec,
    is_secret_spec,
    reproducible_spec,
)
from arena.errors import ArenaError
from arena.game.deck import check_deck
from arena.game.variants import VARIANTS
from arena.hosting.catalog import Catalog, DeckSetEntry

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
    assert a.public
    assert load_deck_set("random:5:8").decks != a.decks
    assert load_deck_set("random:3:7").decks == a.decks[:3]
    for deck in a.decks:
        check_deck(deck, "classic")


@pytest.mark.parametrize("size", [1, 5, 36])
def test_balanced_decks_pass_the_criterion_and_the_quota(size: int, table):
    deck_set = load_deck_set(f"balanced:{size}:11", "huibers")
    assert deck_set.public and deck_set.name == f"balanced:{size}:11"
    assert len(deck_set.decks) == size == len(set(deck_set.decks))
    assert all(passes_criterion(deck, table) for deck in deck_set.decks)
    aside = Counter(d[0] for d in deck_set.decks)
    for value, (lo, hi) in set_aside_quota(size).items():
        assert lo <= aside[value] <= hi
    assert load_deck_set(f"balanced:{size}:11", "classic").decks == deck_set.decks
    assert load_deck_set(f"balanced:{size}:12").decks != deck_set.decks


def test_fixed36_is_the_balanced_generator_under_its_own_key():
    fixed = load_deck_set("fixed36").decks
    assert generate_balanced(36, 2018, "fixed36") == fixed
    assert generate_balanced(36, 2018) != fixed  # balanced:N draws under another key


@pytest.mark.parametrize("family", ["balanced", "random"])
def test_a_secret_spec_takes_its_tournament_secret(family: str):
    spec = f"{family}:4"
    assert is_secret_spec(spec) and is_builtin_spec(spec)
    secret = draw_secret_seed()
    deck_set = load_deck_set(spec, secret=secret)
    assert not deck_set.public and deck_set.name == spec
    assert "secret seed" in deck_set.description and str(secret) not in repr(deck_set)
    assert str(secret) not in json.dumps(deck_set.to_json())
    public = load_deck_set(reproducible_spec(spec, secret))
    assert public.decks == deck_set.decks and public.public
    assert reproducible_spec(spec, secret) == f"{spec}:{secret}"
    with pytest.raises(DeckSetError, match=rf"{spec} is drawn from a new secret seed for each"):
        load_deck_set(spec)


@pytest.mark.parametrize("spec", ["fixed36", "random:3:1", "balanced:3:1", "file:x", "two"])
def test_a_public_spec_takes_no_secret(spec: str):
    assert not is_secret_spec(spec)
    with pytest.raises(DeckSetError, match="is public"):
        load_deck_set(spec, secret=5)
    with pytest.raises(DeckSetError, match="is public"):
        reproducible_spec(spec, 5)


def test_secret_seeds_are_fresh_and_wide():
    seeds = {draw_secret_seed() for _ in range(8)}
    assert len(seeds) == 8  # equal draws of 128 bits: a chance of 28 in 2**128
    assert all(0 <= s < 2**SECRET_BITS for s in seeds)
    assert max(s.bit_length() for s in seeds) > 64  # all 8 below 2**64: a chance of 2**-512


@pytest.mark.parametrize(
    "spec",
    [
        "nope",
        "random:0",
        "random:x",
        "random:",
        "random:3:y",
        "random:1:2:3",
        "file:",
        "balanced:0:1",
        "balanced:x",
        "balanced:2:y",
        "balanced:1:2:3",
        "balanced:100001:1",
    ],
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
    # deck positions are numbered from 0, as the store, replay, games and report number them
    assert [line.split()[0] for line in result.output.splitlines()[1:4]] == ["0", "1", "2"]


def test_cli_show_a_secret_spec_says_it_is_secret():
    result = CliRunner().invoke(cli, ["decks", "show", "balanced:36"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "arena: error: balanced:36 is drawn from a new secret seed for each tournament, so it "
        "has no decks to show; a tournament's report publishes its seed once it is finished, "
        "and then `arena decks show balanced:36:SEED` shows its decks"
    ]
    shown = CliRunner().invoke(cli, ["decks", "show", "balanced:36:7", "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["public"] is True and data["balance"]["passing"] == 36


@pytest.mark.parametrize(
    "spec", ["random:0", "random:x", "balanced:x", "random:4", "file:/no/such/decks.txt"]
)
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
