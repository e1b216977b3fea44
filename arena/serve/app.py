"""The competition server's HTTP API (docs/serve.md), a Starlette application.

Every request that changes or reads a participant's own things carries its token as
``Authorization: Bearer TOKEN`` (never in the URL, so no access log ever holds one); a request
for a bot or a game may carry it too, to see its own bots' private output, which
:mod:`arena.serve.privacy` keeps from everyone else. Errors are
JSON objects ``{"error": "one line"}`` with the matching status code. The application never
imports or runs an upload: it stores the file and queues it for :class:`Pipeline`.
"""

from __future__ import annotations

import datetime as dt
import hmac
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from arena.hosting import submissions
from arena.hosting.submissions import SubmissionError
from arena.serve import pages, privacy, results
from arena.serve.finals import report_path
from arena.serve.ladder import Ladder, LadderSettings, is_ladder_game
from arena.serve.pipeline import Limits, Pipeline
from arena.serve.standings import StandingsRefresher
from leaderboard import competition as C
from leaderboard import participants as P
from leaderboard.exports import game_json
from leaderboard.replay_page import replay_page_html
from leaderboard.store import Store, StoredGame, StoreError

#: What an uploaded file may be called: a wheel or a source package, no directories.
UPLOAD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}\.(whl|tar\.gz)$")
#: Bytes a multipart body may hold beyond its file (boundaries, headers, small fields).
FORM_OVERHEAD = 64 * 1024
#: The cookie holding a form's CSRF token (the form holds the same value).
CSRF_COOKIE = "arena_csrf"
#: The largest refused body still read to its end before the answer.
DRAIN_BYTES = 256 * 1024 * 1024


class ApiError(Exception):
    """An answer other than success: ``status`` and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _drain(request: Request, length: int) -> None:
    """Read and drop a refused body (up to :data:`DRAIN_BYTES`), so that a client still
    sending it can read the answer instead of meeting a closed connection."""
    if length > DRAIN_BYTES:
        return
    async for _ in request.stream():
        pass


def _number(text: str, what: str) -> int:
    """A stored thing's number from a URL or a form (404 when it is none: not digits, or more
    than a database integer holds)."""
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise ApiError(404, f"no such {what}")
    return int(text)


def _upload_id(text: str) -> int:
    """An upload's number from a URL or a form (404 when it is none)."""
    return _number(text, "upload")


def hour_ago() -> dt.datetime:
    """The start of the hour an upload limit counts."""
    return dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(
    store: Store,
    spool: Path,
    limits: Limits | None = None,
    ladder_settings: LadderSettings | None = None,
    background: bool = True,
    builders: int | None = None,
) -> Starlette:
    """The server's application over ``store``, keeping uploads under ``spool`` until built,
    and placing checked ones into the ladder (:mod:`arena.serve.ladder`), its standings refit
    as games arrive (:mod:`arena.serve.standings`); without ``background``, only the pages and
    the API (nothing is built, played or refit: for measuring the pages); ``builders`` uploads are
    built at once (default :func:`~arena.serve.pipeline.default_builders`)."""
    limits = limits or Limits()
    settings = ladder_settings or LadderSettings()
    refresher = StandingsRefresher(store, store.url, settings)
    ladder = Ladder(store, store.url, settings, refresher.wake)
    pipeline = Pipeline(store, spool, limits, ladder.wake, builders)
    workers = (pipeline, ladder, refresher) if background else ()

    def by_token(token: str) -> P.ParticipantInfo:
        found = P.by_token(store, token.strip()) if token.strip() else None
        if found is None:
            raise ApiError(401, "unknown token")
        return found

    def participant(request: Request) -> P.ParticipantInfo:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "a participant's token is needed: Authorization: Bearer TOKEN")
        return by_token(token)

    def viewer(request: Request) -> privacy.Viewer:
        """Who asks: the participant whose token the request carries (401 for a token that is
        nobody's), else nobody."""
        if "authorization" not in request.headers:
            return privacy.ANONYMOUS
        return privacy.Viewer(participant(request).id)

    async def read_form(request: Request, upload: bool) -> FormData:
        """The request's form; with ``upload``, its length checked first (a refused body
        drained)."""
        length = request.headers.get("content-length")
        if upload and (length is None or not length.isdigit()):
            raise ApiError(411, "the upload must say its length (Content-Length)")
        if upload and length is not None and int(length) > limits.upload_bytes + FORM_OVERHEAD:
            await _drain(request, int(length))
            raise ApiError(413, f"an upload may hold at most {limits.upload_bytes} bytes")
        try:
            return await request.form(max_files=1 if upload else 0, max_fields=8)
        except Exception as exc:  # a malformed body is the sender's problem, told in one line
            raise ApiError(400, f"not a multipart form with a file: {exc}"[:300]) from None

    async def accept(who: P.ParticipantInfo, form: FormData) -> int:
        """Store the form's file as ``who``'s next upload and queue it; its id."""
        if C.close_if_due(store, settings.name).frozen:
            raise ApiError(403, f"the competition {settings.name!r} is frozen: no new uploads")
        if P.uploads_since(store, who.id, hour_ago()) >= limits.per_hour:  # before reading it
            raise ApiError(429, f"at most {limits.per_hour} uploads per participant per hour")
        file = form.get("file")
        if not isinstance(file, UploadFile) or not file.filename:
            raise ApiError(400, "the form has no file field named 'file'")
        name = Path(file.filename).name
        if not UPLOAD_NAME.match(name):
            raise ApiError(400, "the file must be a wheel (.whl) or a source package (.tar.gz)")
        data = await file.read(limits.upload_bytes + 1)
        if len(data) > limits.upload_bytes:
            raise ApiError(413, f"an upload may hold at most {limits.upload_bytes} bytes")
        try:  # counted again with the upload stored, in one transaction
            upload_id = P.add_upload(store, who.id, name, len(data), per_hour=limits.per_hour)
        except P.UploadLimitError as exc:
            raise ApiError(429, str(exc)) from None
        where = spool / str(upload_id)
        where.mkdir(parents=True, exist_ok=True)
        (where / name).write_bytes(data)
        pipeline.wake()
        return upload_id

    async def submit(request: Request) -> JSONResponse:
        who = participant(request)
        upload_id = await accept(who, await read_form(request, upload=True))
        body = {"id": upload_id, "status": "queued", "url": f"/api/submissions/{upload_id}"}
        return JSONResponse(body, status_code=202)

    # --- the forms: the token typed in, a CSRF token in a cookie and a hidden field --------

    def form_page(template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        csrf = secrets.token_urlsafe(24)
        page = pages.render(template, csrf=csrf, name=ladder.settings.name, **values)
        response = HTMLResponse(page, status_code=status_code)
        response.set_cookie(CSRF_COOKIE, csrf, httponly=True, samesite="strict")
        return response

    def checked_form(request: Request, form: FormData) -> P.ParticipantInfo:
        cookie = request.cookies.get(CSRF_COOKIE, "")
        field = str(form.get("csrf") or "")
        if not cookie or not hmac.compare_digest(cookie, field):
            raise ApiError(403, "the form is stale or was not sent from this site: load it again")
        return by_token(str(form.get("token") or ""))

    async def submit_form(request: Request) -> HTMLResponse:
        if request.method == "GET":
            return form_page("submit.html")
        try:
            form = await read_form(request, upload=True)
            upload_id = await accept(checked_form(request, form), form)
        except ApiError as exc:
            return form_page("submit.html", exc.status, error=str(exc))
        return form_page("submit.html", queued=upload_id)

    async def own_page(request: Request) -> HTMLResponse:
        if request.method == "GET":
            return form_page("me.html")
        try:
            form = await read_form(request, upload=False)
            who = checked_form(request, form)
            if form.get("game"):  # a game as the participant's own bots saw it
                return HTMLResponse(game_html(str(form.get("game")), privacy.Viewer(who.id)))
        except ApiError as exc:
            return form_page("me.html", exc.status, error=str(exc))
        done, error, status = None, None, 200
        try:
            if form.get("withdraw"):
                withdrawn = withdraw(who, _upload_id(str(form.get("withdraw"))))
                done = (
                    f"Upload {withdrawn.id} withdrawn: {', '.join(withdrawn.bots)} left the ladder."
                )
            elif form.get("rank"):
                voice = rank(who, str(form.get("rank")))
                done = f"{voice.player} speaks for you in rated play from now on."
        except ApiError as exc:
            error, status = str(exc), exc.status
        mine = privacy.Viewer(who.id)
        uploads = [pages.upload_json(store, settings, u, mine) for u in P.uploads(store, who.id)]
        own = sorted({b for u in uploads if u["status"] in P.LIVE for b in u["bots"]})
        return form_page(
            "me.html",
            status,
            who=who.name,
            uploads=uploads,
            done=done,
            error=error,
            voice=P.voices(store).get(who.id),
            own_bots=own,
            uploads_left=max(0, limits.per_hour - P.uploads_since(store, who.id, hour_ago())),
            per_hour=limits.per_hour,
        )

    def rank(who: P.ParticipantInfo, bot: str) -> P.Voice:
        """Make ``bot`` the one of ``who``'s bots that speaks for it in rated play."""
        try:
            voice = P.choose_ranked(store, who.id, bot)
        except P.ParticipantError as exc:
            raise ApiError(400, str(exc)) from None
        ladder.wake()
        return voice

    async def ranked(request: Request) -> JSONResponse:
        who = participant(request)
        if request.method == "PUT":
            try:
                body = await request.json()
            except ValueError:
                raise ApiError(400, 'the body must be JSON: {"bot": "NAME"}') from None
            if not isinstance(body, dict) or not isinstance(body.get("bot"), str):
                raise ApiError(400, 'the body must be JSON: {"bot": "NAME"}')
            rank(who, body["bot"])
        voice = P.voices(store).get(who.id)
        return JSONResponse({"voice": None if voice is None else voice.to_json()})

    def own_upload(who: P.ParticipantInfo, upload_id: int) -> P.UploadInfo:
        found = P.upload(store, upload_id)
        if found is None:
            raise ApiError(404, f"no upload {upload_id}")
        if found.participant_id != who.id:
            raise ApiError(403, f"upload {upload_id} is another participant's")
        return found

    def withdraw(who: P.ParticipantInfo, upload_id: int) -> P.UploadInfo:
        """Take ``who``'s upload out of the ladder (its games stay)."""
        found = own_upload(who, upload_id)
        if C.competition(store, settings.name).final:
            raise ApiError(
                409,
                f"the competition {settings.name!r} is being finished: its final round-robin "
                "plays every ranked bot, and no upload is withdrawn from it",
            )
        if found.status not in ("placing", "ranked") or not found.distribution or not found.version:
            raise ApiError(
                409, f"upload {upload_id} is {found.status}: only a placed upload can be withdrawn"
            )
        try:
            submissions.Store().withdraw(found.distribution, found.version)
        except SubmissionError as exc:
            raise ApiError(409, str(exc)) from None
        P.set_upload(store, upload_id, "withdrawn")
        ladder.wake()
        return own_upload(who, upload_id)

    def withdraw_upload(request: Request) -> JSONResponse:
        who = participant(request)
        found = withdraw(who, _upload_id(str(request.path_params["upload_id"])))
        return JSONResponse(pages.upload_json(store, settings, found, privacy.Viewer(who.id)))

    def own_uploads(request: Request) -> JSONResponse:
        who = participant(request)
        mine = privacy.Viewer(who.id)
        return JSONResponse([privacy.upload(u, mine) for u in P.uploads(store, who.id)])

    def one_upload(request: Request) -> JSONResponse:
        who = participant(request)
        found = own_upload(who, _upload_id(str(request.path_params["upload_id"])))
        return JSONResponse(pages.upload_json(store, settings, found, privacy.Viewer(who.id)))

    def health(request: Request) -> JSONResponse:
        body = {
            "ok": True,
            "ladder_error": ladder.last_error,
            "standings_error": refresher.last_error,
            "ladder_notes": ladder.notes[-5:],
        }
        return JSONResponse(body)

    def results_csv(request: Request) -> Response:
        found = results.results_csv(results.results(store, ladder.settings))
        return Response(
            found,
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="results.csv"'},
        )

    def leaderboard(request: Request) -> JSONResponse:
        return JSONResponse(pages.leaderboard_json(store, ladder.settings))

    def leaderboard_page(request: Request) -> HTMLResponse:
        return HTMLResponse(pages.leaderboard_page(store, ladder.settings))

    def bot_data(name: str, seen_by: privacy.Viewer) -> dict[str, Any]:
        data = pages.bot_json(store, ladder.settings, name, seen_by)
        if data is None:
            raise ApiError(404, f"no bot {name!r} has played in the ladder")
        return data

    def bot(request: Request) -> JSONResponse:
        name = str(request.path_params["name"])
        seen_by = viewer(request)
        return JSONResponse(bot_data(pages.ranked_name(store, ladder.settings, name), seen_by))

    def bot_page(request: Request) -> Response:
        name = str(request.path_params["name"])
        ranked = pages.ranked_name(store, ladder.settings, name)
        if ranked != name:  # a submitted bot's name alone: its ranked version's own address
            return RedirectResponse(f"/bots/{quote(ranked, safe='@')}", status_code=307)
        data = pages.bot_json(store, ladder.settings, name, privacy.ANONYMOUS)
        if data is None:  # a page that says why, not the API's JSON
            page = pages.missing_page(pages.missing_bot(store, name), ladder.settings)
            return HTMLResponse(page, status_code=404)
        return HTMLResponse(pages.bot_page(data, ladder.settings))

    def ladder_game(
        game_id: str, seen_by: privacy.Viewer
    ) -> tuple[int, StoredGame, bool, frozenset[int]]:
        """Game ``game_id`` as ``seen_by`` may see it, whether its deck stays hidden, and the
        seats whose own view ``seen_by`` may read (:func:`.privacy.own_seats`)."""
        try:
            tid, game = store.game(_number(game_id, "game"))
        except StoreError:
            raise ApiError(404, "no such game") from None
        if not is_ladder_game(store, ladder.settings, tid):
            raise ApiError(404, "no such game")
        # while the competition runs, every game's deck stays hidden, its tournament's or not
        running = C.competition(store, settings.name).final_tournament_id is None
        hidden = running or not store.tournament(tid).decks_revealed
        own = privacy.own_seats(store, tid, game, seen_by)
        return tid, privacy.game(store, tid, game, seen_by), hidden, own

    def game(request: Request) -> JSONResponse:
        game_id = str(request.path_params["game_id"])
        tid, found, hidden, own = ladder_game(game_id, viewer(request))
        return JSONResponse(game_json(tid, found, hidden, own))

    def game_html(game_id: str, seen_by: privacy.Viewer) -> str:
        tid, found, hidden, own = ladder_game(game_id, seen_by)
        return replay_page_html(
            found.record, game_id=found.id, tournament_id=tid, hidden=hidden, own_seats=own
        )

    def game_page(request: Request) -> HTMLResponse:
        return HTMLResponse(game_html(str(request.path_params["game_id"]), privacy.ANONYMOUS))

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return _error(exc.status, str(exc))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        store.create_schema()
        spool.mkdir(parents=True, exist_ok=True)
        for worker in workers:
            worker.start()
        try:
            yield {}
        finally:
            for worker in workers:
                worker.stop()

    def final(request: Request) -> Response:
        where = report_path(settings.name)
        if not where.is_file():
            raise ApiError(404, f"the competition {settings.name!r} has no final result yet")
        return FileResponse(where, media_type="text/html")

    routes = [
        Route("/final", final),
        Route("/api/health", health),
        Route("/", leaderboard_page),
        Route("/submit", submit_form, methods=["GET", "POST"]),
        Route("/me", own_page, methods=["GET", "POST"]),
        Route("/bots/{name}", bot_page),
        Route("/games/{game_id}", game_page),
        Route("/api/leaderboard", leaderboard),
        Route("/results.csv", results_csv),
        Route("/api/bots/{name}", bot),
        Route("/api/games/{game_id}", game),
        Route("/api/submissions", submit, methods=["POST"]),
        Route("/api/submissions", own_uploads, methods=["GET"]),
        Route("/api/submissions/{upload_id}", one_upload, methods=["GET"]),
        Route("/api/submissions/{upload_id}", withdraw_upload, methods=["DELETE"]),
        Route("/api/ranked", ranked, methods=["GET", "PUT"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers={ApiError: api_error})
