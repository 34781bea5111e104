"""Shared fixtures: where the rankscope binary and the shared trace corpus are."""

import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _find_binary():
    env = os.environ.get("RANKSCOPE_BIN")
    if env:
        return env
    built = REPO / "build/dev/src/rankscope/cli/rankscope"
    if built.exists():
        return str(built)
    return shutil.which("rankscope")


@pytest.fixture(scope="session")
def rankscope_bin():
    path = _find_binary()
    if not path:
        pytest.fail("no rankscope binary: run scripts/test.sh (it builds one) or set RANKSCOPE_BIN")
    return path


@pytest.fixture(scope="session")
def rankscoped_bin(rankscope_bin):
    """The node daemon built (or installed) beside the rankscope binary."""
    from capture_helpers import find_rankscoped

    path = find_rankscoped(rankscope_bin)
    if not path:
        pytest.fail("no rankscoped binary next to the rankscope binary: run scripts/test.sh")
    return path


@pytest.fixture(scope="session")
def shared_dir():
    path = pathlib.Path(os.environ.get("RANKSCOPE_SHARED", REPO.parent / "shared"))
    if not (path / "traces").is_dir():
        pytest.fail(f"the shared trace corpus is missing: {path}/traces")
    return path


@pytest.fixture(scope="session")
def run_rankscope(rankscope_bin):
    def run(*args, check=True, timeout=600):
        proc = subprocess.run([rankscope_bin, *map(str, args)], capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"rankscope {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stderr}")
        return proc
    return run
