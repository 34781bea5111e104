"""rankscope: performance troubleshooting for distributed PyTorch training.

The analysis engine and the `rankscope` command are C++ (installed next to this package by
`pip install .`). This package holds the parts that must run inside Python.
Importing it never imports torch.
"""

__version__ = "0.1.0"


def binary_path():
    """Path of the installed `rankscope` command, or None if it is not on PATH."""
    import shutil

    return shutil.which("rankscope")
