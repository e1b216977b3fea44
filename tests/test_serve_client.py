"""``arena submit PATH --server``'s side of the API: what it sends for a project directory."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from arena.serve.client import ServerError, source_package, upload


def test_a_project_directory_is_sent_as_a_source_package_without_caches(tmp_path: Path) -> None:
    project = tmp_path / "my-bot"
    for folder in ("my_bot/__pycache__", ".git/objects", ".venv/lib", "my_bot.egg-info", "dist"):
        (project / folder).mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "my-bot"\n')
    (project / "my_bot" / "__init__.py").write_text("")
    (project / "my_bot" / "stale.pyc").write_bytes(b"\0")
    (project / "my_bot" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (project / ".git" / "objects" / "ab").write_text("history")
    name, data = source_package(project)
    assert name == "my-bot.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
    assert sorted(m.name for m in members) == [
        "my-bot",
        "my-bot/my_bot",
        "my-bot/my_bot/__init__.py",
        "my-bot/pyproject.toml",
    ]
    assert {(m.uid, m.gid, m.uname) for m in members} == {(0, 0, "")}


def test_what_cannot_be_sent_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match="not a project directory"):
        source_package(tmp_path)
    with pytest.raises(ServerError, match="no such file or directory"):
        upload("http://127.0.0.1:9", "token", tmp_path / "missing")
