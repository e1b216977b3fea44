"""The other end of the server's API, for ``arena submit PATH --server URL --token T``: the
standard library's HTTP client, a multipart body made here."""

from __future__ import annotations

import json
import secrets
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


def upload(server: str, token: str, path: Path) -> dict[str, Any]:
    """Send the package file ``path`` to ``server``; returns the server's answer (``id``,
    ``status``, ``url``)."""
    if not path.is_file():
        raise ServerError(f"{path}: not a file (upload a wheel or a source package)")
    boundary = secrets.token_hex(16)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{path.name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
    ).encode()
    body = head + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
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
