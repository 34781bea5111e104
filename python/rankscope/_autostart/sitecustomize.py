"""Loaded at interpreter start-up by processes launched with `rankscope run` (this directory is
first on their PYTHONPATH). Installs the zero-code collector, then runs any sitecustomize the
environment had before. Never raises: start-up of the job must not depend on rankscope."""

import os
import sys


def _install():
    if os.environ.get("RANKSCOPE_AUTOSTART", "") in ("", "0"):
        return
    try:
        from rankscope import _autostart_hook

        _autostart_hook.install()
    except Exception as e:  # pragma: no cover - reported, never fatal
        print(f"rankscope: zero-code collector not installed: {e!r}", file=sys.stderr)


def _chain():
    # Import the next sitecustomize on sys.path, as if this one did not exist.
    here = os.path.dirname(os.path.abspath(__file__))
    saved = list(sys.path)
    me = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import importlib

        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    except Exception as e:
        print(f"rankscope: the environment's sitecustomize failed: {e!r}", file=sys.stderr)
    finally:
        sys.path[:] = saved
        if me is not None:
            sys.modules["sitecustomize"] = me


_install()
_chain()
