"""What the CLI is given that is not a trace file: a FIFO, a gzip cut short, a symlink loop; and
which Python `rankscope run` starts (issue 10)."""

import os
import pathlib
import shutil
import subprocess
import sys
import venv

import pytest


def test_fifo_is_refused_not_waited_on(run_rankscope, tmp_path):
    fifo = tmp_path / "rank0.json"
    os.mkfifo(fifo)
    for command in ("info", "analyze"):
        proc = run_rankscope(command, fifo, check=False, timeout=60)  # no writer ever comes: must not block
        assert proc.returncode != 0
        assert "a FIFO (named pipe), not a trace file" in proc.stderr, proc.stderr


def test_gzip_cut_in_the_middle_says_truncated(run_rankscope, shared_dir, tmp_path):
    source = shared_dir / "traces/kineto/resnet50_workers0/worker0.1623143089861.pt.trace.json.gz"
    data = source.read_bytes()
    cut = tmp_path / "rank0.pt.trace.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    proc = run_rankscope("analyze", cut, check=False)
    assert proc.returncode != 0
    assert "truncated" in proc.stderr and "larger than" not in proc.stderr, proc.stderr


def test_self_referencing_symlink_says_loop(run_rankscope, tmp_path):
    loop = tmp_path / "loop.json"
    loop.symlink_to("loop.json")
    for command in ("info", "analyze"):
        proc = run_rankscope(command, loop, check=False)
        assert proc.returncode != 0
        assert "symlink loop" in proc.stderr, proc.stderr


@pytest.fixture
def venv_with_rankscope(tmp_path, rankscope_bin):
    """A virtual environment that can import rankscope (a .pth file pointing at the package),
    with the rankscope executable in its bin/ as `pip install` puts it."""
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    site = next(env.glob("lib/python*/site-packages"))
    (site / "rankscope-src.pth").write_text(str(pathlib.Path(__file__).resolve().parents[2] / "python") + "\n")
    shutil.copy(rankscope_bin, env / "bin" / "rankscope")
    return env


def test_run_uses_the_python_rankscope_was_installed_into(venv_with_rankscope, tmp_path):
    env = venv_with_rankscope
    bare = dict(os.environ, PATH="/usr/bin:/bin")
    bare.pop("PYTHONPATH", None)
    bare.pop("RANKSCOPE_PYTHON", None)
    # The system python cannot import rankscope here: the venv's can, and must be the one used.
    if subprocess.run(["python3", "-c", "import rankscope"], env=bare, capture_output=True).returncode == 0:
        pytest.skip("rankscope is importable by the system python3 here: nothing to tell apart")
    out = tmp_path / "prefix.txt"
    cmd = [str(env / "bin/rankscope"), "run", "--no-auto-trigger", "--", sys.executable, "-c",
           f"import os; open({str(out)!r}, 'w').write(os.environ['RANKSCOPE_AUTOSTART'])"]
    proc = subprocess.run(cmd, env=bare, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == "1"
    # RANKSCOPE_PYTHON overrides: here with an interpreter that cannot import rankscope.
    proc = subprocess.run(cmd, env=dict(bare, RANKSCOPE_PYTHON="/usr/bin/python3"), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0 and "No module named" in proc.stderr, proc.stderr
