"""The seccomp filter of a sandboxed bot host: the system calls a bot never needs are refused.

The filter is built with libseccomp (the system's ``libseccomp.so.2``, through ctypes) and
exported as a classic BPF program, which bubblewrap loads (``--seccomp FD``) just before it runs
the host. Everything not listed is allowed; a refused call fails with ``EPERM`` (``ENOSYS`` for
``clone3``, so that the C library falls back to ``clone``, whose flags the filter can read). A
system call of another architecture (32-bit calls on a 64-bit machine) kills the process:
libseccomp's default for a foreign architecture.

Where libseccomp cannot be loaded, :func:`filter_program` returns ``None`` and the sandbox runs
without the filter (``arena bots`` says so).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import signal
from functools import lru_cache

#: System calls refused outright: mounting and namespaces, tracing and reading other processes,
#: kernel keys, modules, BPF and perf, io_uring, changing the machine (clock, swap, reboot), and
#: ``sysinfo`` (the machine's load averages, free memory and process count, which the sandbox
#: masks in ``/proc``), and System V IPC and POSIX message queues (their objects outlive the
#: process that made them: a channel from one of a host's served processes to its fork server,
#: and so to the next process, that no descriptor or mapping shows).
DENIED = (
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
    "acct", "swapon", "swapoff", "reboot", "syslog", "vhangup", "quotactl", "quotactl_fd",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "iopl", "ioperm", "personality",
    "sched_setaffinity", "sysinfo",
    "msgget", "semget", "shmget", "mq_open",
    "setpgid",
)  # fmt: skip
#: The system calls that send a signal, and which of their arguments is the signal: sending
#: ``SIGCONT`` is refused, so that nothing of a bot continues its host's stopped fork server
#: (:mod:`arena.hosting.epochs`). ``setpgid`` is refused above for the same reason: a process
#: group the server is in could otherwise be made to become orphaned, and the kernel continues
#: the stopped members of such a group.
SIGNAL_ARGUMENT = {
    "kill": 1, "tkill": 1, "tgkill": 2, "rt_sigqueueinfo": 1, "rt_tgsigqueueinfo": 2,
    "pidfd_send_signal": 1,
}  # fmt: skip

#: ``clone`` with any of these flags (new namespaces) is refused: a bot cannot make itself a
#: user namespace in which it would hold capabilities again.
NAMESPACE_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
    | 0x00000080  # CLONE_NEWTIME
)
#: ``ioctl(fd, TIOCSTI, ...)`` pushes input into a terminal.
TIOCSTI = 0x5412

#: What the kernel would otherwise share between the processes of different bots, or keep
#: from one served process of a bot to the next (``docs/sandbox.md``, "What a fresh process
#: shares"): refused with the error a call the kernel lacks would give, so that libraries
#: fall back. File locks and leases (a lock on a file every sandbox sees, such as a module of
#: the environment, is a live channel between bots) and notifications of other processes'
#: accesses to files (inotify; dnotify is ``fcntl(F_NOTIFY)``); whether a file's pages are in
#: memory (``mincore``, ``cachestat``; ``preadv2`` with ``RWF_NOWAIT`` below): pages another
#: bot, or an earlier served process, read.
SHARED_STATE = ("flock", "inotify_init", "inotify_init1", "inotify_add_watch", "mincore",
                "cachestat", "process_madvise", "process_mrelease")  # fmt: skip
#: ``fcntl`` commands refused for the same reasons: ``F_GETLK``, ``F_SETLK``, ``F_SETLKW``,
#: their open-file-description forms, ``F_SETLEASE``, ``F_GETLEASE``, ``F_NOTIFY``.
FCNTL_DENIED = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)
#: ``preadv2``/``pwritev2``'s flag that fails a read whose data is not in memory.
RWF_NOWAIT = 0x8
#: System calls that act on another process given its pid (argument 0) and are allowed on the
#: caller only (pid 0): a served process could otherwise change its host's stopped fork server
#: (its priority, scheduling, resource limits, memory placement), which every later process
#: inherits. ``setpriority`` and ``ioprio_set`` are allowed on the calling process only
#: (``PRIO_PROCESS``/``IOPRIO_WHO_PROCESS`` with 0: a process group or a user's processes
#: take the server in).
OWN_PROCESS_ONLY = ("prlimit64", "sched_setscheduler", "sched_setparam", "sched_setattr",
                    "migrate_pages", "move_pages")  # fmt: skip
#: Socket families a bot may open: Unix sockets only (``AF_UNIX``, which live and die with the
#: processes that hold them, in the sandbox's own network namespace). Internet sockets would
#: leave connection states behind in that namespace (``TIME_WAIT``) for the next process.
AF_UNIX = 1

_ALLOW = 0x7FFF0000
_NE = 1
_MASKED_EQ = 7


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _library() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)
    ]  # fmt: skip
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


class SeccompError(OSError):
    """libseccomp refused to build the filter."""


def _add(lib: ctypes.CDLL, ctx: int, action: int, name: str, *cmps: _ArgCmp) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number < 0:  # not a system call on this architecture (or an older libseccomp)
        return
    array = (_ArgCmp * len(cmps))(*cmps) if cmps else None
    code = lib.seccomp_rule_add_array(ctx, action, number, len(cmps), array)
    if code < 0:
        raise SeccompError(-code, f"seccomp rule for {name}: {os.strerror(-code)}")


@lru_cache(maxsize=1)
def filter_program() -> bytes | None:
    """The filter as a BPF program (what ``bwrap --seccomp`` reads), or ``None`` without
    libseccomp."""
    lib = _library()
    if lib is None:
        return None
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        return None
    read_end, write_end = os.pipe()
    try:
        eperm = _errno_action(errno.EPERM)
        for name in DENIED:
            _add(lib, ctx, eperm, name)
        _add(lib, ctx, _errno_action(errno.ENOSYS), "clone3")
        for flag in _single_bits(NAMESPACE_FLAGS):
            _add(lib, ctx, eperm, "clone", _ArgCmp(0, _MASKED_EQ, flag, flag))
        _add(lib, ctx, eperm, "ioctl", _ArgCmp(1, _MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
        for name, argument in SIGNAL_ARGUMENT.items():
            _add(lib, ctx, eperm, name, _ArgCmp(argument, _MASKED_EQ, 0xFFFFFFFF, signal.SIGCONT))
        nosys = _errno_action(errno.ENOSYS)
        for name in SHARED_STATE:
            _add(lib, ctx, nosys, name)
        for command in FCNTL_DENIED:
            _add(lib, ctx, _errno_action(errno.EINVAL), "fcntl",
                 _ArgCmp(1, _MASKED_EQ, 0xFFFFFFFF, command))  # fmt: skip
        for name in ("preadv2", "pwritev2"):
            _add(lib, ctx, _errno_action(errno.EOPNOTSUPP), name,
                 _ArgCmp(5, _MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT))  # fmt: skip
        for name in OWN_PROCESS_ONLY:
            _add(lib, ctx, eperm, name, _ArgCmp(0, _NE, 0, 0))
        for name in ("setpriority", "ioprio_set"):
            which = 0 if name == "setpriority" else 1  # PRIO_PROCESS, IOPRIO_WHO_PROCESS
            _add(lib, ctx, eperm, name, _ArgCmp(0, _NE, which, 0))
            _add(lib, ctx, eperm, name, _ArgCmp(1, _NE, 0, 0))
        for name in ("socket", "socketpair"):
            _add(lib, ctx, _errno_action(errno.EAFNOSUPPORT), name, _ArgCmp(0, _NE, AF_UNIX, 0))
        code = lib.seccomp_export_bpf(ctx, write_end)
        if code < 0:
            raise SeccompError(-code, f"seccomp export: {os.strerror(-code)}")
        os.close(write_end)
        write_end = -1
        chunks = []
        while chunk := os.read(read_end, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        lib.seccomp_release(ctx)
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def _single_bits(mask: int) -> list[int]:
    return [1 << i for i in range(mask.bit_length()) if mask >> i & 1]
