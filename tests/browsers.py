"""A real browser for the page tests: Debian's chromium, headless, through its chromedriver
(never a downloaded one). Where either is missing the tests using it are skipped with the reason,
unless ``ARENA_REQUIRE_BROWSER=1`` (CI), where that is a failure."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

#: Where the documentation's screenshots live.
DOCS_IMAGES = Path(__file__).resolve().parent.parent / "docs" / "images"


def browser_missing() -> str | None:
    """Why no browser can run here, or None."""
    if shutil.which("chromedriver") is None:
        return "no chromedriver on PATH (Debian: apt install chromium-driver)"
    if not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")):
        return "no chromium on PATH (Debian: apt install chromium)"
    return None


@contextmanager
def headless_chromium(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A headless chromium driven through the installed chromedriver (the test is skipped, or
    fails under ``ARENA_REQUIRE_BROWSER=1``, when there is none)."""
    missing = browser_missing()
    if missing is not None:
        if os.environ.get("ARENA_REQUIRE_BROWSER") == "1":
            pytest.fail(f"ARENA_REQUIRE_BROWSER=1 but {missing}", pytrace=False)
        pytest.skip(missing)
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={width},{height}")
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


def save_docs_image(png: bytes, name: str, varies: bool = False, phone: bool = False) -> None:
    """Save the screenshot as ``docs/images/NAME``, unless the one there shows the same page
    (a few pixels of anti-aliasing differ from run to run: the checkout stays clean). A page
    that ``varies`` from run to run (times, results) replaces the one there only when
    ``ARENA_UPDATE_SCREENSHOTS=1``. A ``phone`` screenshot is of a narrow window (at least
    360 pixels wide rather than 1000)."""
    from PIL import Image, ImageChops

    where = DOCS_IMAGES / name
    shot = Image.open(io.BytesIO(png)).convert("RGB")
    assert shot.size[0] >= (360 if phone else 1000) and shot.size[1] >= 600
    if varies and where.exists() and os.environ.get("ARENA_UPDATE_SCREENSHOTS") != "1":
        return
    if where.exists():
        stored = Image.open(where).convert("RGB")
        if stored.size == shot.size:
            changed = ImageChops.difference(stored, shot).convert("L").point(lambda v: v > 32)
            if sum(changed.histogram()[1:]) < 0.001 * shot.size[0] * shot.size[1]:
                return
    where.parent.mkdir(exist_ok=True)
    where.write_bytes(png)


def follow(driver: Any, element: Any, seconds: float = 30.0) -> None:
    """Click ``element`` (a link or a form's button) and wait until the next page has replaced
    this one: a click returns before the browser has loaded where it leads."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    page = driver.find_element("tag name", "html")
    element.click()
    WebDriverWait(driver, seconds).until(expected_conditions.staleness_of(page))
    WebDriverWait(driver, seconds).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )
