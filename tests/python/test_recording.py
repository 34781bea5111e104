"""The recording helper retries only what PyTorch's own crashes look like."""

import sys

import pytest

import recording


def test_a_process_killed_by_a_signal_is_recorded_again(tmp_path, capsys):
    marker = tmp_path / "attempts"
    code = (f"import os, signal, pathlib; p = pathlib.Path({str(marker)!r}); "
            "p.write_text(p.read_text() + 'x' if p.exists() else 'x'); "
            "os.kill(os.getpid(), signal.SIGSEGV) if len(p.read_text()) < 2 else None")
    recording.record([sys.executable, "-c", code], env=None, timeout=60)
    assert marker.read_text() == "xx"
    assert "recording again" in capsys.readouterr().out


def test_a_process_that_always_crashes_fails_after_three_attempts(tmp_path):
    out = tmp_path / "half_written"
    out.mkdir()
    with pytest.raises(recording.RecordingFailed, match="after 3 attempt"):
        recording.record([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"],
                         env=None, timeout=60, clean=[out])
    assert not out.exists()


def test_an_error_in_the_workload_is_not_retried():
    with pytest.raises(recording.RecordingFailed, match=r"(?s)after 1 attempt.*ZeroDivisionError"):
        recording.record([sys.executable, "-c", "1/0"], env=None, timeout=60)
