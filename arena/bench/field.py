"""A field of entrants for the scale benchmarks: one package, made by the bot scaffold
(:mod:`arena.kit.scaffold`), that registers the scaffolded pure-Python bot under many names, the way
a course's or a club's package of student bots would.

:func:`install_field` writes the package and its installed metadata (``*.dist-info`` with the
``arena.bots`` entry point) into a directory; putting that directory on ``PYTHONPATH`` (and
``sys.path``) makes the bots visible to the catalog and to every host, sandboxed or not.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from arena.kit.scaffold import Layout, class_name, package_files, package_name

#: The scaffolded bot's name; the field's bots are called ``fieldbot-000``, ``fieldbot-001``...
FIELD_BOT = "fieldbot"

_PLUGIN = '''\
"""Registers {count} copies of the scaffolded bot, as {first} ... {last}."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.hookspecs import hookimpl

from .bot import {cls}


@hookimpl
def arena_register_bots(register: Callable[..., Any]) -> None:
    """Register every copy."""
    for number in range({count}):
        register(f"{name}-{{number:03d}}", {cls}, "the scaffolded bot", {{"guard_known": True}})
'''


def field_names(count: int) -> list[str]:
    """The names of a field of ``count`` bots."""
    return [f"{FIELD_BOT}-{number:03d}" for number in range(count)]


def install_field(count: int, where: Path) -> Path:
    """Write a package registering ``count`` copies of the scaffolded bot, with its metadata,
    into ``where`` (a directory for ``PYTHONPATH``); returns ``where``."""
    files = package_files(Layout.of((FIELD_BOT,)))
    package = package_name(FIELD_BOT)
    cls = class_name(FIELD_BOT)
    target = where / package
    target.mkdir(parents=True, exist_ok=True)
    (target / "__init__.py").write_text(files[f"src/{package}/__init__.py"])
    (target / "bot.py").write_text(files[f"src/{package}/bot.py"])
    names = field_names(count)
    (target / "plugin.py").write_text(
        _PLUGIN.format(count=count, first=names[0], last=names[-1], cls=cls, name=FIELD_BOT)
    )
    info = where / f"{package}-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: loveletter-{FIELD_BOT}\nVersion: 1.0\n"
    )
    (info / "top_level.txt").write_text(f"{package}\n")
    (info / "entry_points.txt").write_text(f"[arena.bots]\n{FIELD_BOT} = {package}.plugin\n")
    return where


def use_field(where: Path) -> None:
    """Make the field installed in ``where`` visible to this process and the hosts it starts."""
    path = str(where)
    if path not in sys.path:
        sys.path.insert(0, path)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (path, old) if p)
    importlib.invalidate_caches()
