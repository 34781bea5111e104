"""Zero-code step counting for `rankscope run`: waits (without importing anything) until the
process imports torch.optim.optimizer, then registers a global optimizer step post-hook. The
first optimizer.step() creates the process's Tracker; later steps call Tracker.step().

With several optimizers (GANs, per-parameter-group optimizers), only the first optimizer that
steps counts, so that one training iteration is one step.
"""

import importlib.abc
import importlib.machinery
import sys

_TARGET = "torch.optim.optimizer"
_state = {"tracker": None, "clock": None}


def _on_step(optimizer, args, kwargs):
    try:
        clock = _state["clock"]
        if clock is None:
            from rankscope.tracker import Tracker

            _state["clock"] = clock = id(optimizer)
            _state["tracker"] = Tracker()
        if id(optimizer) == clock:
            _state["tracker"].step()
    except Exception:
        pass  # never into the training loop


def _register(module):
    module.register_optimizer_step_post_hook(_on_step)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Runs _register right after torch.optim.optimizer has been executed."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            try:
                _register(module)
            except Exception as e:
                print(f"rankscope: could not register the optimizer hook: {e!r}", file=sys.stderr)

        spec.loader.exec_module = exec_module
        return spec


def install():
    if _TARGET in sys.modules:
        _register(sys.modules[_TARGET])
    elif not any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PostImportFinder())


def tracker():
    """The process's Tracker once its first optimizer step happened (tests, debugging)."""
    return _state["tracker"]
