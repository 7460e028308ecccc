"""Callbacks of `Tuner.tune`, each called as `callback(tuner, inputs, results)` when trials
finish: `log_to_file` appends the tuning log, `progress_bar` reports progress."""
from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

from ..record import encode


def log_to_file(path: str):
    """Appends one JSON line per trial to `path` (flushed at once, so a cut-off run keeps
    what it measured)."""
    def callback(tuner, inputs, results):
        with open(path, "a") as f:
            for inp, res in zip(inputs, results):
                f.write(encode(inp.task, inp.config, res) + "\n")
    return callback


def _fmt_s(s: Optional[float]) -> str:
    if s is None:
        return "?"
    return f"{s:.0f}s" if s < 120 else f"{s / 60:.1f}min"


def progress_bar(prefix: str = "", stream: Optional[TextIO] = None, every_s: float = 0.0):
    """A progress line on `stream` (default stderr): trials done / asked, errors, best
    GFLOP/s, elapsed and ETA; rewritten in place on a terminal, one line per update
    otherwise (at most every `every_s` seconds)."""
    state = {"last": 0.0, "errors": 0}

    def callback(tuner, inputs, results):
        out = stream or sys.stderr
        state["errors"] += sum(1 for r in results if not r.ok)
        now = time.time()
        done = tuner.trials - tuner._start_trials
        final = done >= tuner.budget
        if now - state["last"] < every_s and not final:
            return
        state["last"] = now
        elapsed = now - (tuner.start_time or now)
        line = (f"{prefix}trials {done}/{tuner.budget}  errors {state['errors']}  best "
                f"{tuner.best_flops:.2f} GFLOP/s  elapsed {_fmt_s(elapsed)}  ETA "
                f"{_fmt_s(tuner.eta())}")
        tty = getattr(out, "isatty", lambda: False)()
        out.write(("\r" + line + ("\n" if final else "")) if tty else line + "\n")
        out.flush()
    return callback


__all__ = ["log_to_file", "progress_bar"]
