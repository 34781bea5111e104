"""rankscope: performance troubleshooting for distributed PyTorch training.

The analysis engine and the `rankscope` command are C++ (installed next to this package by
`pip install .`). This package holds the parts that must run inside Python: the in-process
collector (`Tracker`, and `rankscope run` for no code change). See docs/capture.md.

Importing it never imports torch.
"""

__version__ = "0.1.0"

__all__ = ["Tracker", "binary_path"]


def binary_path():
    """Path of the installed `rankscope` command, or None if it is not on PATH."""
    import shutil

    return shutil.which("rankscope")


def __getattr__(name):
    # Lazy, so that `import rankscope` stays cheap and torch-free until a Tracker is made.
    if name == "Tracker":
        from rankscope.tracker import Tracker

        return Tracker
    raise AttributeError(f"module 'rankscope' has no attribute {name!r}")
