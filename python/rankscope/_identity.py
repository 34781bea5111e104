"""Who this process is: rank, job, host. The same rules as the daemon's /proc reader
(src/rankscope/daemon/proc_identity.cc), so both sides name a job the same way."""

import os
import re
import socket

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(text):
    """Maps any string onto one safe path component ([A-Za-z0-9._-], no leading dot)."""
    name = _UNSAFE.sub("_", str(text))[:128]
    if name.startswith("."):
        name = "_" + name[1:]
    return name or "job"


def is_safe_name(text):
    return bool(text) and len(text) <= 128 and not text.startswith(".") and not _UNSAFE.search(text)


def _int_env(key, default=-1):
    try:
        return int(os.environ[key])
    except (KeyError, ValueError):
        return default


def rank():
    return _int_env("RANK")


def local_rank():
    return _int_env("LOCAL_RANK")


def world_size():
    return _int_env("WORLD_SIZE")


def job():
    for key in ("RANKSCOPE_JOB", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"):
        value = os.environ.get(key, "")
        if value and value != "none":
            return safe_name(value)
    if "RANK" in os.environ:
        return f"ppid{os.getppid()}"
    return f"pid{os.getpid()}"


def host():
    return socket.gethostname()


def command():
    try:
        with open(f"/proc/{os.getpid()}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return ""
