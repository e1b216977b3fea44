"""The other end of the server's API, for ``arena submit PATH --server URL --token T``: the
standard library's HTTP client, a multipart body made here."""

from __future__ import annotations

import io
import json
import secrets
import tarfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

#: Seconds one request may take.
TIMEOUT = 60.0


class ServerError(ArenaError):
    """The server refused, or could not be reached (one line)."""


def _request(
    url: str, token: str, data: bytes | None = None, content_type: str | None = None
) -> Any:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        try:
            said = json.loads(exc.read()).get("error", exc.reason)
        except (ValueError, AttributeError):
            said = exc.reason
        raise ServerError(f"{url}: {exc.code} {said}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ServerError(f"cannot reach {url}: {reason}") from None


#: What packing a project directory leaves out: version control, caches, environments, builds.
SKIPPED = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", "build", "dist",
     ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)  # fmt: skip


def source_package(directory: Path) -> tuple[str, bytes]:
    """A project directory packed as a source package (``NAME.tar.gz``, the directory as its
    one top-level folder, without :data:`SKIPPED` folders, ``*.egg-info`` or compiled files):
    its file name and bytes. Nothing of it is run here; the server builds it in its sandbox."""
    if not (directory / "pyproject.toml").is_file() and not (directory / "setup.py").is_file():
        raise ServerError(f"{directory}: not a project directory (no pyproject.toml or setup.py)")
    root = directory.resolve().name

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        name = Path(info.name).name
        if name in SKIPPED or name.endswith((".egg-info", ".pyc")):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as tar:
        tar.add(directory, arcname=root, filter=keep)
    return f"{root}.tar.gz", packed.getvalue()


def upload(server: str, token: str, path: Path) -> dict[str, Any]:
    """Send the package ``path`` (a wheel, a source package, or a project directory, packed
    as a source package first) to ``server``; returns the server's answer (``id``,
    ``status``, ``url``)."""
    if path.is_dir():
        name, data = source_package(path)
    elif path.is_file():
        name, data = path.name, path.read_bytes()
    else:
        raise ServerError(f"{path}: no such file or directory")
    boundary = secrets.token_hex(16)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
    ).encode()
    body = head + data + f"\r\n--{boundary}--\r\n".encode()
    answer: dict[str, Any] = _request(
        f"{server.rstrip('/')}/api/submissions",
        token,
        body,
        f"multipart/form-data; boundary={boundary}",
    )
    return answer


def status(server: str, token: str, upload_id: int) -> dict[str, Any]:
    """Upload ``upload_id`` as the server has it (with its log)."""
    answer: dict[str, Any] = _request(f"{server.rstrip('/')}/api/submissions/{upload_id}", token)
    return answer
