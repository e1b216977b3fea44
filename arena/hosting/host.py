"""The bot host: one process per bot, run as ``python -m arena.hosting.host``.

It loads ONE plugin, the ``arena.bots`` entry point ``--plugin DISTRIBUTION:ENTRY_POINT`` names
(one entry point of one distribution), with pluggy, builds the bot, and answers the referee over
the protocol of :mod:`arena.hosting.protocol` on its standard input and output. Before the plugin is
imported, the protocol's file descriptors are moved out of the way: the bot's ``print``
and any other output to fd 1 or 2 end up on standard error, which the referee keeps as the bot's
bounded log, and fd 0 reads nothing. ``--list`` instead prints one ``listing`` message describing
what the plugin registers (the referee's process learns bot names this way without importing
anything third-party).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from arena.engine.layout import V_NPLAYERS
from arena.hosting import protocol as P
from arena.hosting.names import is_builtin


def _limit(memory_mb: int, processes: int) -> None:
    """Limits the host puts on itself (and its children inherit): address space per process and,
    where no control group counts the bot's processes, processes of its user. In a sandbox that
    user exists only in the host's own user namespace, so the count is the bot's alone."""
    try:
        import resource

        if memory_mb > 0:
            limit = memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        if processes > 0:
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    except (ImportError, ValueError, OSError):  # pragma: no cover - platform without rlimits
        pass


def _take_protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """Keep private copies of fds 0 and 1 for the protocol; point fd 0 at /dev/null and fd 1 at
    standard error, so nothing the bot does can read or corrupt the protocol."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)
    return proto_in, proto_out


def _error_text(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


#: A submission's snapshot, when this host serves one (``--submission``).
_SNAPSHOT: list[str] = []


def _load(plugin: str) -> Any:
    """The registry of the one entry point ``plugin`` names (``DISTRIBUTION:ENTRY_POINT``, or an
    entry-point name no other distribution uses, or a submission's ``@SHA256:ENTRY_POINT``)."""
    from arena.hosting.plugins import load_registry

    return load_registry(only=plugin, snapshot=_SNAPSHOT[0] if _SNAPSHOT else None)


def _listing(plugin: str) -> bytes:
    from arena.game.deck import parse_deck
    from arena.game.variants import VARIANTS

    try:
        registry = _load(plugin)
    except BaseException as exc:  # a plugin may even call sys.exit at import
        return P.encode(P.LISTING, bots=[], error=_error_text(exc))
    bots = [
        {
            "name": b.name,
            "description": b.description,
            "params": b.params,
            "rules": {key: rule.to_json() for key, rule in b.rules.items()},
            "variants": list(b.variants),
            "players": list(b.players),
        }
        for b in registry.bots.values()
    ]
    errors = [e.error for e in registry.errors]
    deck_sets = []
    for info in registry.deck_sets.values():
        try:
            decks = {
                v: [[int(c) for c in parse_deck(deck, v)] for deck in info.loader(v)]
                for v in VARIANTS
            }
        except Exception as exc:
            errors.append(f"deck set {info.name!r}: {_error_text(exc)}")
            continue
        deck_sets.append({"name": info.name, "description": info.description, "decks": decks})
    return P.encode(P.LISTING, bots=bots, deck_sets=deck_sets, error="; ".join(errors) or None)


class _Lines:
    """Lines read from a file descriptor without a buffer of Python's, so that what a process
    has not read yet is still in the pipe (or handed over with :attr:`rest`) when it forks."""

    def __init__(self, fd: int, rest: bytes = b"") -> None:
        self.fd = fd
        self.rest = rest

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        while (end := self.rest.find(b"\n")) < 0:
            data = os.read(self.fd, 65536)
            if not data:
                raise StopIteration
            self.rest += data
        line, self.rest = self.rest[: end + 1], self.rest[end + 1 :]
        return line


#: A served process's exit code when the referee asks for a fresh one (cooperative servers).
_FRESH_EXIT = 117


def _signals(disposition: Any, children: bool) -> None:
    """Set every catchable signal to ``disposition`` (SIGCHLD too if ``children``: ignoring it,
    the kernel reaps a held server's children, which the referee ends, so it learns nothing of
    them, not even their exit)."""
    for number in range(1, signal.NSIG):
        if number in (signal.SIGKILL, signal.SIGSTOP) or (
            number == signal.SIGCHLD and not children
        ):
            continue
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            signal.signal(number, disposition)


def _sender(out: int) -> Callable[..., None]:
    """``send(TYPE, **fields)``: write one message to the descriptor ``out``."""

    def send(message_type: str, /, **fields: Any) -> None:
        data = P.encode(message_type, **fields)
        while data:
            data = data[os.write(out, data) :]

    return send


def _fork_without_hooks() -> Callable[[], int]:
    """How a held fork server forks: the C library's ``_Fork``, which runs no handler of
    ``pthread_atfork`` and, unlike ``os.fork``, none of Python's ``os.register_at_fork`` hooks
    (a bot's hook would run in the arena's fork path: a stall, or code in the server at every
    fork). The server is a single thread (the referee checks it), so Python needs none of its
    after-fork repairs. Where the C library has no ``_Fork`` (before glibc 2.34): ``os.fork``.
    Taken when the host starts, before any code of the bot runs."""
    import ctypes

    try:
        raw = ctypes.PyDLL(None, use_errno=True)._Fork  # the GIL stays held across the call
    except (AttributeError, OSError):
        return os.fork
    raw.restype = ctypes.c_int
    raw.argtypes = []

    def fork() -> int:
        pid = int(raw())
        if pid < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        return pid

    return fork


_FORK = _fork_without_hooks()
_STOP = os.kill  # taken before any code of the bot runs, as _FORK is
#: The protocol's named pipes of a served process of a held fork server
#: (:mod:`arena.hosting.renewal`).
_EPOCH_PIPES = "/run/arena/p"


def _serve_held(bot: Any) -> int:
    """Serve ``bot`` as a held fork server (``docs/sandbox.md``, "Fair play"): hold no
    descriptor and no directory of ``/tmp``, stop, and at each continue fork one process that
    serves the bot on the named pipes the sandbox's agent made for it, then stop again."""
    os.chdir("/")
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.close(fd)
    me = os.getpid()
    while True:
        _STOP(me, signal.SIGSTOP)  # continued by the referee for each fresh process
        if _FORK() == 0:
            code = 1
            try:
                code = _serve_fresh(bot)
            finally:
                os._exit(code)


def _serve_fresh(bot: Any) -> int:
    """In a served process of a held fork server: open this process's own named pipes
    (standard input reads nothing, standard output and error write the log), read the
    referee's ``fresh``, answer ``ready`` and play."""
    _signals(signal.SIG_DFL, True)
    os.dup2(os.open("/dev/null", os.O_RDONLY), 0)  # the lowest free descriptors: 0, then 1
    log = os.open(f"{_EPOCH_PIPES}/log", os.O_WRONLY)
    if log != 1:
        os.dup2(log, 1)
        os.close(log)
    os.dup2(1, 2)
    requests = os.open(f"{_EPOCH_PIPES}/in", os.O_RDONLY)
    send = _sender(os.open(f"{_EPOCH_PIPES}/out", os.O_WRONLY))
    os.chdir("/tmp")
    lines = _Lines(requests)
    message = P.decode(next(lines))
    if message["type"] != P.FRESH:
        send(P.ERROR, kind="protocol", message=f"expected 'fresh', got {message['type']!r}")
        return 1
    send(P.READY, nonce=message.get("nonce", 0), pid=os.getpid())
    return _play(bot, lines, send)


def _serve(
    plugin: str, spec_text: str, proto_in: BinaryIO, proto_out: BinaryIO, fork_server: str
) -> int:
    """Build the bot, say hello, then serve it: from fresh processes forked from this one on the
    referee's ``fresh`` (``fork_server`` ``held``: the referee holds this process stopped between
    forks, gives each served process its own pipes and ends it itself, :func:`_serve_held`;
    ``cooperative``: a served process ends on ``fresh`` and this one forks the next), or from
    this process (``none``)."""
    send = _sender(proto_out.fileno())

    try:
        registry = _load(plugin)
        if registry.errors and not registry.bots:
            raise RuntimeError(registry.errors[0].error)
        spec, bot = registry.build(spec_text)
        warm_up = getattr(bot, "warm_up", None)
        if warm_up is not None:  # compile or load now, not on the clock of the first move
            warm_up()
    except BaseException as exc:
        send(P.ERROR, kind="setup", message=_error_text(exc))
        return 1
    if fork_server != "none":
        # a served process's signals change nothing; set before the hello, after which the
        # referee may stop this process at any moment and checks it has no handler left
        _signals(signal.SIG_IGN, fork_server == "held")
        # what every served process needs (see _play), imported once here, not in each of them
        import arena.game.events
        import arena.seeds  # noqa: F401
        from arena.hosting.hugepages import collapse_anonymous_memory

        collapse_anonymous_memory()  # each fork then copies far fewer page-table entries
    send(P.HELLO, protocol=P.PROTOCOL_VERSION, bot=str(spec), plugin=plugin, pid=os.getpid())
    if fork_server == "held":
        proto_in.close()
        proto_out.close()
        return _serve_held(bot)
    lines = _Lines(proto_in.fileno())
    if fork_server == "none":
        return _play(bot, lines, send)
    while True:
        try:
            message = P.decode(next(lines))
        except StopIteration:
            return 0
        except P.ProtocolError as exc:
            send(P.ERROR, kind="protocol", message=str(exc))
            continue
        if message["type"] == P.QUIT:
            return 0
        if message["type"] != P.FRESH:
            send(P.ERROR, kind="protocol", message=f"expected 'fresh', got {message['type']!r}")
            continue
        nonce = message.get("nonce", 0)
        while True:
            child = os.fork()
            if child == 0:
                _signals(signal.SIG_DFL, True)
                send(P.READY, nonce=nonce, pid=os.getpid())
                os._exit(_play(bot, _Lines(lines.fd, lines.rest), send))
            _, status = os.waitpid(child, 0)
            if os.WIFSIGNALED(status):  # ended as its served process did, for the referee
                signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
                os.kill(os.getpid(), os.WTERMSIG(status))
            if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != _FRESH_EXIT:
                return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
            nonce = 0


def _play(bot: Any, lines: _Lines, send: Callable[..., None]) -> int:
    """Answer the referee's requests for ``bot`` until ``quit``, the end of input or (in a
    cooperative fork server) ``fresh``; returns the exit code."""
    from arena.game import Action, Observation
    from arena.game.events import Event
    from arena.seeds import seed_global_generators

    events: list[Event] = []
    failure: str | None = None  # why the bot cannot play this round (its reset failed)
    # a bot that reads only the view answers from the arrays as sent (docs/protocol.md)
    act_view = getattr(bot, "act_view", None)
    for line in lines:
        try:
            message = P.decode(line)
        except P.ProtocolError as exc:
            send(P.ERROR, kind="protocol", message=str(exc), nonce=0)
            continue
        kind = message["type"]
        nonce = message.get("nonce", 0)
        try:
            if kind == P.ACT:
                if failure is not None:
                    send(P.ERROR, kind="crash", message=failure, nonce=nonce)
                    continue
                view = message["view"]
                if callable(act_view):
                    packed = act_view(view, message["legal"])
                    send(P.ACTION, action=str(Action.from_int(packed)), nonce=nonce)
                    continue
                players = view[V_NPLAYERS]
                events.extend(Event.from_row(row, players) for row in message["events"])
                observation = Observation.from_view(
                    view,
                    [Action.from_int(a) for a in message["legal"]],
                    events,
                    message["tokens"],
                    message["round"],
                )
                answer = bot.act(observation)
                send(P.ACTION, action=str(answer), nonce=nonce)
            elif kind == P.START:
                events = []
                failure = None
                seed = int(message["seed"])
                try:
                    seed_global_generators(seed)
                except Exception as exc:  # a bot may have replaced them
                    failure = f"seeding the global generators failed: {_error_text(exc)}"
                reset = getattr(bot, "reset", None)
                if reset is not None and failure is None:
                    try:
                        reset(seed)
                    except Exception as exc:
                        failure = f"reset failed: {_error_text(exc)}"
            elif kind == P.QUIT:
                return 0
            elif kind == P.FRESH:
                return _FRESH_EXIT
            else:
                send(
                    P.ERROR, kind="protocol", message=f"unknown message type {kind!r}", nonce=nonce
                )
        except Exception as exc:
            send(P.ERROR, kind="crash", message=_error_text(exc), nonce=nonce)
    return 0


def _clean_signals() -> None:
    """Start from the same signal state whatever started the arena (a Ray worker blocks
    ``SIGINT``, a shell in the background ignores it): nothing blocked, every signal at its
    default but those Python itself ignores (``SIGPIPE``, ``SIGXFSZ``)."""
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    for number in range(1, signal.NSIG):
        if number in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGKILL, signal.SIGSTOP):
            continue
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            if signal.getsignal(number) == signal.SIG_IGN:
                signal.signal(number, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    """Run a host (see the module docstring); returns the exit code."""
    _clean_signals()
    parser = argparse.ArgumentParser(prog="python -m arena.hosting.host", description=__doc__)
    parser.add_argument(
        "--plugin",
        required=True,
        metavar="DISTRIBUTION:ENTRY_POINT",
        help="the arena.bots entry point to load, of that distribution (the distribution may be "
        "left out when no other has an entry point of that name)",
    )
    parser.add_argument("--bot", help="the bot to serve: NAME or NAME[param=value,...]")
    parser.add_argument("--list", action="store_true", help="describe the plugin's bots and exit")
    parser.add_argument(
        "--submission",
        metavar="SNAPSHOT",
        help="the read-only snapshot of the submission the plugin comes from: appended to "
        "sys.path (after the arena's own paths; no .pth file in it runs)",
    )
    parser.add_argument(
        "--fork-server",
        choices=("held", "cooperative", "none"),
        default="none",
        help="serve the bot from fresh processes forked after warm_up, on the referee's "
        "'fresh' (held: the referee stops this process between forks and ends served "
        "processes itself; cooperative: a served process ends on 'fresh')",
    )
    parser.add_argument("--memory-mb", type=int, default=0, help="address-space limit (0: none)")
    parser.add_argument("--processes", type=int, default=0, help="process limit (0: none)")
    args = parser.parse_args(argv)
    if is_builtin(args.plugin.partition(":")[0]):
        # numba imports SciPy (and with it numpy.f2py, charset_normalizer...) only to see whether
        # linear algebra is available; the reference bots' kernels use none. Without it a
        # reference host holds 16 MiB less, which every fresh process forked from it would
        # copy and free again (arena bench tournament_games_per_s: +10%).
        sys.modules.setdefault("scipy", None)  # type: ignore[arg-type]
    proto_in, proto_out = _take_protocol_streams()
    _limit(args.memory_mb, args.processes)
    if args.submission:
        # a plain append: after the arena's paths, so it shadows none of them, and no .pth runs
        sys.path.append(args.submission)
        _SNAPSHOT.append(args.submission)
    if args.list:
        proto_out.write(_listing(args.plugin))
        proto_out.flush()
        return 0
    if not args.bot:
        parser.error("--bot is required unless --list is given")
    return _serve(args.plugin, args.bot, proto_in, proto_out, args.fork_server)


if __name__ == "__main__":
    sys.exit(main())
