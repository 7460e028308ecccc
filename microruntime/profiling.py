"""time_evaluator (TVM semantics, timed in C), BenchmarkResult, and the profiling Report."""
import json
import struct

import numpy as np

from ._loader import ffi, lib
from .base import check_call
from .device import device
from .packed_func import PackedFunc, convert_func


class BenchmarkResult:
    """Per-repeat times in seconds and their statistics (std is the population std)."""

    def __init__(self, results):
        self.results = tuple(float(r) for r in results)
        self.mean = float(np.mean(self.results))
        self.std = float(np.std(self.results))
        self.median = float(np.median(self.results))
        self.min = float(np.min(self.results))
        self.max = float(np.max(self.results))

    def __repr__(self):
        return (f"BenchmarkResult(min={self.min}, mean={self.mean}, median={self.median}, "
                f"max={self.max}, std={self.std}, results={list(self.results)})")

    def __str__(self):
        return (
            "Execution time summary:\n"
            f"{'mean (ms)':^12} {'median (ms)':^12} {'max (ms)':^12} "
            f"{'min (ms)':^12} {'std (ms)':^12}\n"
            f"{self.mean * 1000:^12.4f} {self.median * 1000:^12.4f} {self.max * 1000:^12.4f} "
            f"{self.min * 1000:^12.4f} {self.std * 1000:^12.4f}"
            "               "
        )


def time_evaluator(func, dev, number=10, repeat=1, min_repeat_ms=0,
                   limit_zero_time_iterations=100, cooldown_interval_ms=0,
                   repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=None):
    """A callable timing PackedFunc `func`: 1 warm-up call, then per repeat `f_preproc` (a
    PackedFunc, optional) and `number` timed calls; returns a BenchmarkResult."""
    if cache_flush_bytes:
        raise ValueError("cache_flush_bytes is not supported by the microruntime")
    if number < 1 or repeat < 1:
        raise ValueError(f"number ({number}) and repeat ({repeat}) must be at least 1")
    dev = device(dev)
    func = convert_func(func)
    preproc = convert_func(f_preproc) if f_preproc is not None else None
    out = ffi.new("TVMFFIObject**")
    check_call(lib.mr_time_evaluator(
        func._handle, dev._c[0], number, repeat, min_repeat_ms, limit_zero_time_iterations,
        cooldown_interval_ms, repeats_to_cooldown,
        preproc._handle if preproc is not None else ffi.NULL, out))
    timer = PackedFunc(out[0])
    fmt = "@" + "d" * repeat

    def evaluator(*args):
        blob = timer(*args)
        return BenchmarkResult(struct.unpack(fmt, blob))

    evaluator.func = func
    return evaluator


# ---- Report: what a profiling run gathers (TVM's runtime.profiling.Report) ----------------
class Duration:
    """A duration metric, in microseconds."""

    def __init__(self, microseconds):
        self.microseconds = float(microseconds)

    def __repr__(self):
        return f"Duration({self.microseconds})"


class Percent:
    """A percentage metric."""

    def __init__(self, percent):
        self.percent = float(percent)

    def __repr__(self):
        return f"Percent({self.percent})"


class Count:
    """An integer count metric."""

    def __init__(self, value):
        self.value = int(value)

    def __repr__(self):
        return f"Count({self.value})"


class Ratio:
    """A ratio metric."""

    def __init__(self, ratio):
        self.ratio = float(ratio)

    def __repr__(self):
        return f"Ratio({self.ratio})"


_METRIC_KEYS = ((Duration, "microseconds"), (Percent, "percent"), (Count, "count"),
                (Ratio, "ratio"))
_FIRST_COLUMNS = ("Name", "Duration (us)", "Percent", "Device", "Count", "Argument Shapes")


def _to_json_value(value):
    for cls, key in _METRIC_KEYS:
        if isinstance(value, cls):
            return {key: value.value if cls is Count else getattr(value, key)}
    return {"string": str(value)}


def _from_json_value(obj):
    (key, value), = obj.items()
    for cls, name in _METRIC_KEYS:
        if key == name:
            return cls(value)
    if key == "string":
        return str(value)
    raise ValueError(f"unknown metric {key!r} in a profiling report")


def _number(value):
    """The number a metric holds (None for strings)."""
    for cls, key in _METRIC_KEYS:
        if isinstance(value, cls):
            return value.value if cls is Count else getattr(value, key)
    return None


def _cell(value):
    if isinstance(value, Count):
        return f"{value.value:,}"
    number = _number(value)
    return f"{number:,.2f}" if number is not None else str(value)


class Report:
    """Per-call metrics of a profiling run (`calls`: a list of {metric: value}), per-device
    metrics (`device_metrics`: {device: {metric: value}}) and the `configuration`. Values are
    Duration, Percent, Count, Ratio or str."""

    def __init__(self, calls, device_metrics, configuration):
        self.calls = [dict(call) for call in calls]
        self.device_metrics = {dev: dict(m) for dev, m in device_metrics.items()}
        self.configuration = dict(configuration)

    def json(self):
        """The report as JSON: {"calls": [...], "device_metrics": {...}, "configuration": {...}},
        each value an object such as {"microseconds": 12.5} or {"string": "cpu0"}."""
        def encode(metrics):
            return {key: _to_json_value(value) for key, value in metrics.items()}

        return json.dumps({
            "calls": [encode(call) for call in self.calls],
            "device_metrics": {dev: encode(m) for dev, m in self.device_metrics.items()},
            "configuration": encode(self.configuration),
        }, indent=2)

    @classmethod
    def from_json(cls, s):
        """The report that `json()` wrote."""
        data = json.loads(s)

        def decode(metrics):
            return {key: _from_json_value(value) for key, value in metrics.items()}

        return cls([decode(c) for c in data.get("calls", [])],
                   {dev: decode(m) for dev, m in data.get("device_metrics", {}).items()},
                   decode(data.get("configuration", {})))

    def csv(self):
        """The calls as CSV (a header of every metric name, sorted; strings quoted)."""
        keys = sorted({key for call in self.calls for key in call})
        lines = [",".join(keys)]
        for call in self.calls:
            cells = []
            for key in keys:
                value = call.get(key, "")
                number = _number(value)
                cells.append(repr(number) if number is not None
                             else '"' + str(value).replace('"', '""') + '"')
            lines.append(",".join(cells))
        return "\n".join(lines) + "\n"

    def _aggregated(self):
        groups = {}
        for call in self.calls:
            key = (str(call.get("Hash", call.get("Name", ""))),
                   str(call.get("Argument Shapes", "")), str(call.get("Device", "")))
            groups.setdefault(key, []).append(call)
        rows = []
        for calls in groups.values():
            row = {}
            for key in {k for c in calls for k in c}:
                values = [c[key] for c in calls if key in c]
                first = values[0]
                if isinstance(first, (Duration, Percent, Count)) and all(
                        type(v) is type(first) for v in values):
                    row[key] = type(first)(sum(_number(v) for v in values))
                elif isinstance(first, Ratio) and all(isinstance(v, Ratio) for v in values):
                    row[key] = Ratio(sum(v.ratio for v in values) / len(values))
                else:
                    row[key] = first if all(str(v) == str(first) for v in values) else ""
            rows.append(row)
        return rows

    def table(self, sort=True, aggregate=True, col_sums=True):
        """A human-readable table of the calls (aggregated per name, argument shapes and device;
        sorted by descending duration), with sums, per-device totals and the configuration."""
        rows = self._aggregated() if aggregate else [dict(c) for c in self.calls]
        if sort:
            rows.sort(key=lambda r: -_number(r.get("Duration (us)", Duration(0))))
        keys = {k for r in rows for k in r}
        columns = [k for k in _FIRST_COLUMNS if k in keys] + sorted(keys - set(_FIRST_COLUMNS))
        table = [list(columns)] + [[_cell(r.get(k, "")) for k in columns] for r in rows]
        if col_sums and rows:
            table.append(["-" * 10] + [""] * (len(columns) - 1))
            sums = []
            for k in columns:
                values = [r[k] for r in rows if k in r]
                if values and all(isinstance(v, (Duration, Percent, Count)) for v in values):
                    sums.append(_cell(type(values[0])(sum(_number(v) for v in values))))
                else:
                    sums.append("")
            table.append(["Sum"] + sums[1:])
            for dev, metrics in self.device_metrics.items():
                total = ["Total"] + [""] * (len(columns) - 1)
                for i, k in enumerate(columns):
                    if k == "Device":
                        total[i] = dev
                    elif k in metrics and i > 0:
                        total[i] = _cell(metrics[k])
                table.append(total)
        widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
        lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                           for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
                 for row in table]
        if self.configuration:
            lines += ["", "Configuration", "-------------"]
            lines += [f"{k}: {_cell(v)}" for k, v in self.configuration.items()]
        return "\n".join(lines) + "\n"

    __str__ = table

    def to_chrome_trace(self, process_name="microruntime"):
        """The calls as a Chrome trace (the Trace Event Format that chrome://tracing and
        Perfetto read): {"traceEvents": [...], "displayTimeUnit": "ms"}. Each call is one
        complete event ("ph": "X", "ts" and "dur" in microseconds) named after its function, in
        the order the calls ran, end to end on the lane (tid) of the thread that made them; its
        "args" hold the call's other metrics (node, device, argument shapes, percent).
        Metadata events name the process and the lane."""
        pid, tid = 1, 1
        events = [
            {"name": "process_name", "ph": "M", "pid": pid, "tid": tid,
             "args": {"name": process_name}},
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
             "args": {"name": "calling thread"}},
        ]
        ts = 0.0
        for call in self.calls:
            dur = max(0.0, _number(call.get("Duration (us)", Duration(0))) or 0.0)
            args = {key: _number(value) if _number(value) is not None else str(value)
                    for key, value in call.items() if key not in ("Name", "Duration (us)")}
            events.append({"name": str(call.get("Name", "")), "cat": "kernel", "ph": "X",
                           "ts": round(ts, 3), "dur": round(dur, 3), "pid": pid, "tid": tid,
                           "args": args})
            ts += dur
        return {"traceEvents": events, "displayTimeUnit": "ms",
                "otherData": {key: _number(value) if _number(value) is not None else str(value)
                              for key, value in self.configuration.items()}}

    def save_trace(self, path, process_name="microruntime"):
        """Writes `to_chrome_trace()` to `path` as JSON (open it in https://ui.perfetto.dev or
        chrome://tracing)."""
        trace = self.to_chrome_trace(process_name)
        events = ",\n".join(json.dumps(e) for e in trace.pop("traceEvents"))
        rest = json.dumps(trace)[1:-1]
        with open(path, "w", encoding="utf-8") as f:
            f.write(f'{{"traceEvents": [\n{events}\n],\n{rest}}}\n')

    def __repr__(self):
        return f"Report({len(self.calls)} calls, devices {sorted(self.device_metrics)})"
