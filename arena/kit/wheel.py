"""Write a pure-Python wheel byte by byte: no build backend, no package code run, no network.

The benchmarks (:mod:`arena.bench.measure`) submit such wheels, as an author would submit one
built by their own tools; the tests make their hostile packages the same way.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Mapping
from pathlib import Path


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(
    directory: Path,
    distribution: str,
    version: str,
    files: Mapping[str, str],
    *,
    entry_points: str | None = None,
    requires: tuple[str, ...] = (),
    top_level: str | None = None,
) -> Path:
    """Write ``<name>-<version>-py3-none-any.whl`` of ``distribution`` into ``directory`` (made
    if missing) and return its path: ``files`` (path in the wheel -> text), then its
    ``METADATA`` (with ``requires`` as ``Requires-Dist``), ``WHEEL``, ``entry_points.txt`` and
    ``top_level.txt`` when given, and the ``RECORD`` of them all."""
    name = distribution.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    content = dict(files)
    content[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires)
    )
    content[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: arena\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    if entry_points is not None:
        content[f"{info}/entry_points.txt"] = entry_points
    if top_level is not None:
        content[f"{info}/top_level.txt"] = top_level
    record = [
        f"{path},{_digest(text.encode())},{len(text.encode())}" for path, text in content.items()
    ]
    record.append(f"{info}/RECORD,,")
    content[f"{info}/RECORD"] = "\n".join(record) + "\n"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for file, text in content.items():
            archive.writestr(file, text)
    return path
