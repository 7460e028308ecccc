"""The runtime's command line (it imports no compiler module), in the spirit of `tvmc run`:

    python -m microruntime run model.so --inputs in.npz --output out.npz [--print-top 5]
    python -m microruntime run model.so --profile          # per-kernel times
    python -m microruntime run model.so --profile --trace trace.json   # and their timeline
    python -m microruntime run model.so --benchmark --repeat 10 --number 10
    python -m microruntime run model.so --device cuda     # a model built for a GPU target
    python -m microruntime manifest model.so               # what the model needs and gives

Both kinds of model run: graph executor models (fixed shapes, read from the manifest) and
Relax VM models (their `main` takes its arguments by parameter name; shapes may be symbolic).
Mistakes (a missing file, an input of the wrong shape, a file that is not a model) print one
line, `error: ...`, on stderr and exit with status 1; wrong usage exits with status 2. Anything
else that goes wrong is reported in one line too, naming the stage, with the traceback printed
as well when KILN_TRACEBACK=1.
"""
import argparse
import os
import sys
import traceback
import zipfile
import zlib

import numpy as np

from .device import device as make_device
from .graph_executor import GraphModule, print_manifest, read_manifest
from .library_file import holds_kind, read_library_bytes
from .module import load_module, num_threads
from .ndarray import array
from .relax_vm import VirtualMachine, read_functions

RUN_EPILOG = """\
examples:
  python -m microruntime run model.so                         # random inputs, prints outputs
  python -m microruntime run model.so --inputs in.npz --output out.npz --print-top 5
  python -m microruntime run model.so --benchmark --repeat 10 --number 20
  MR_NUM_THREADS=2 python -m microruntime run model.so --profile
  python -m microruntime run model.so --profile --trace trace.json   # open in ui.perfetto.dev
  python -m microruntime run vm_model.so --input-shape x:4,32 --seed 1 --benchmark

--inputs is a .npz file (numpy.savez) with one array per model input, by input name
(`python -m microruntime manifest model.so` lists them; for a Relax VM model, the parameter
names of its function main). Without it the inputs are random (standard normal floats, seed 0;
a Relax VM model's shapes may be symbolic, so give each one with --input-shape NAME:DIMS: its
random inputs are float32). MR_NUM_THREADS sets the number of worker threads; KILN_TRACEBACK=1
prints the traceback of an internal error."""

_TRACEBACK_HINT = "(set KILN_TRACEBACK=1 for the traceback)"


class _UserError(Exception):
    pass


class _Stage:
    """What the command is doing, for the message of an unexpected failure."""

    def __init__(self, name):
        self.name = name


def _one_line(err):
    return " ".join(str(err).split()) or type(err).__name__


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m microruntime",
        description="The microruntime: runs models compiled by Kiln (python -m compiler "
                    "compile) without the compiler.",
        epilog="Run `python -m microruntime COMMAND --help` for a command's options.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    m = sub.add_parser("manifest", help="print a model's inputs, outputs, params, memory and "
                       "kernels without loading it",
                       description="Print what a model needs and gives (inputs, outputs, "
                       "params, memory, kernels; for a Relax VM model, its functions and their "
                       "parameters), read from the file without loading or running it.")
    m.add_argument("model", help="the model file (.so, .a, .o or .tar)")
    r = sub.add_parser("run", help="run a model (.so) on inputs from a .npz file or random "
                       "ones; print, save, profile or benchmark it",
                       description="Run a model exported as a shared library (.so), by the "
                       "graph executor or the Relax VM (function main): set its inputs, run it "
                       "once, print its outputs (and optionally save them, profile each kernel "
                       "or time the whole run).",
                       epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("model", help="the compiled model (.so)")
    r.add_argument("--inputs", metavar="FILE.npz",
                   help="the input arrays by name (default: random inputs of the right shape)")
    r.add_argument("--input-shape", action="append", default=[], metavar="NAME:DIMS",
                   help="Relax VM models without --inputs: the shape of a random input, e.g. "
                        "x:4,32 (repeat it for each parameter of main)")
    r.add_argument("--output", metavar="FILE",
                   help="save the outputs in this file, as it is named (numpy.savez format; "
                        "arrays output_0, output_1, ...)")
    r.add_argument("--print-top", type=int, metavar="K", default=0,
                   help="print the K largest values of output 0 with their indices (per row)")
    r.add_argument("--profile", action="store_true",
                   help="run kernel by kernel and print each one's time")
    r.add_argument("--trace", metavar="FILE.json",
                   help="profile the kernels and write their timeline to this file as a "
                        "Chrome trace (chrome://tracing, https://ui.perfetto.dev): one event "
                        "per kernel call, on the lane of the thread that made it")
    r.add_argument("--benchmark", action="store_true",
                   help="time the whole run: --repeat measurements of --number runs each")
    r.add_argument("--repeat", type=int, default=5, help="measurements (default 5)")
    r.add_argument("--number", type=int, default=10, help="runs per measurement (default 10)")
    r.add_argument("--warmup-ms", type=float, default=500, metavar="MS",
                   help="untimed runs for at least this long before the measurements "
                        "(default 500): a process that has just started can run slower for a "
                        "few tenths of a second (on a virtual machine the host may keep its "
                        "threads on one core until then), and the measurements are of the "
                        "steady state")
    r.add_argument("--seed", type=int, default=None,
                   help="seed of the random inputs (default 0; not with --inputs)")
    r.add_argument("--device", default="cpu", metavar="NAME[:ID]",
                   help="the device the model was built for: cpu (default), cuda, opencl, "
                        "vulkan, ... with an optional index, e.g. cuda:1")
    return p


# ---- manifest -------------------------------------------------------------------------------
def _manifest(args, stage):
    if not os.path.isfile(args.model):
        raise _UserError(f"no such model file: {args.model}")
    stage.name = "reading the manifest"
    if _is_vm_library(args.model):
        return _print_vm_functions(args.model)
    print_manifest(args.model)
    return None


def _print_vm_functions(path):
    funcs = read_functions(path)
    lines = [f"model: {path}", "  a Relax VM executable (shapes may be symbolic; run its "
             "function main with `python -m microruntime run`)"]
    for name, num_args, params in funcs:
        names = ", ".join(params) if len(params) == num_args else f"{num_args} arguments"
        lines.append(f"  function {name}({names})")
    print("\n".join(lines))


# ---- inputs ---------------------------------------------------------------------------------
def _random_inputs(spec, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for i in spec:
        shape, dtype = tuple(i["shape"]), np.dtype(i["dtype"])
        if dtype.kind == "f":
            out[i["name"]] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            out[i["name"]] = rng.integers(0, 2, shape).astype(dtype)
        else:
            out[i["name"]] = rng.integers(0, 10, shape).astype(dtype)
    return out


def _read_npz(path):
    """The arrays of the .npz file `path` by name, or a _UserError saying why not."""
    if not os.path.isfile(path):
        raise _UserError(f"no such inputs file: {path}")
    expected = "--inputs takes a .npz file (numpy.savez) with one array per input, by name"
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise _UserError(f"{path} is a .npy file (one unnamed array): {expected}")
        with loaded as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as err:
        raise _UserError(f"{path}: not a readable .npz file ({_one_line(err)}): "
                         f"{expected}") from None


def _check_names(path, arrays, names, what):
    missing = [n for n in names if n not in arrays]
    extra = [k for k in arrays if k not in names]
    if missing or extra:
        detail = "; ".join(part for part in (
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(extra)}" if extra else "") if part)
        raise _UserError(f"{path} holds {', '.join(arrays) or 'no arrays'}; {what} "
                         f"{', '.join(names) or '(none)'} ({detail})")


def _load_inputs(path, spec):
    arrays = _read_npz(path)
    _check_names(path, arrays, [i["name"] for i in spec], "the model's inputs are")
    for i in spec:
        a = arrays[i["name"]]
        if tuple(a.shape) != tuple(i["shape"]) or str(a.dtype) != i["dtype"]:
            raise _UserError(f"input {i['name']!r} of {path} is {a.dtype}{list(a.shape)}; "
                             f"the model expects {i['dtype']}{list(i['shape'])}")
    return arrays


def _parse_input_shape(text):
    name, sep, dims = text.rpartition(":")
    parts = [d.strip() for d in dims.split(",")] if dims.strip() else []
    if not sep or not name or not parts or not all(p.isdigit() for p in parts):
        raise _UserError(f"bad --input-shape {text!r}: write NAME:D1,D2,... with non-negative "
                         "integer dims, e.g. --input-shape x:4,32")
    return name, [int(p) for p in parts]


def _fmt(a):
    return f"{a.dtype}[{','.join(map(str, a.shape))}]"


def _open_device(name):
    """The Device named by --device, present on this machine (else a _UserError)."""
    try:
        dev = make_device(name)
    except ValueError as err:
        raise _UserError(f"--device {name}: {err}") from None
    if not dev.exist:
        raise _UserError(f"--device {name}: no such device on this machine ({dev} does not "
                         "exist or its driver is missing)")
    return dev


# ---- the two kinds of model -----------------------------------------------------------------
def _is_vm_library(path):
    """Whether the library's blob holds a Relax VM executable (its kind, as the blob writes it)."""
    return holds_kind(read_library_bytes(path), "relax.VMExecutable")


def _flat_outputs(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat_outputs(v)]
    return [value.numpy()]


class _GraphModel:
    """A graph executor model: inputs by the names and shapes of its manifest."""

    def __init__(self, args, stage):
        stage.name = "reading the manifest"
        spec = read_manifest(args.model)["inputs"]
        if args.input_shape:
            raise _UserError("--input-shape is for Relax VM models; this model's input shapes "
                             "are fixed: " + ", ".join(f"{i['name']} {i['dtype']}{i['shape']}"
                                                       for i in spec))
        stage.name = "reading the inputs"
        self.inputs = _load_inputs(args.inputs, spec) if args.inputs else \
            _random_inputs(spec, args.seed or 0)
        stage.name = "loading the model"
        self.dev = _open_device(args.device)
        self.gmod = GraphModule(load_module(args.model)["default"](self.dev))
        self.gmod.set_input(**self.inputs)

    def run(self):
        g = self.gmod
        g.run()
        return [g.get_output(i).numpy() for i in range(g.get_num_outputs())]

    def profile(self):
        return self.gmod.profile()

    def benchmark(self, repeat, number, min_repeat_ms=0):
        return self.gmod.benchmark(self.dev, repeat=repeat, number=number,
                                   min_repeat_ms=min_repeat_ms)


class _VMModel:
    """A Relax VM model: the arguments of its function main, bound by parameter name."""

    FUNC = "main"

    def __init__(self, args, stage):
        stage.name = "reading the function table"
        funcs = {name: (num_args, params) for name, num_args, params in
                 read_functions(args.model)}
        if self.FUNC not in funcs:
            raise _UserError(f"{args.model}: the Relax VM executable has no function "
                             f"{self.FUNC!r} (its functions: {', '.join(funcs) or 'none'})")
        num_args, names = funcs[self.FUNC]
        if len(names) != num_args:
            raise _UserError(f"{args.model}: the executable does not record the parameter "
                             f"names of {self.FUNC}, so its inputs cannot be bound by name")
        stage.name = "reading the inputs"
        if args.inputs:
            if args.input_shape:
                raise _UserError("give the inputs either with --inputs or as random ones of "
                                 "--input-shape, not both")
            arrays = _read_npz(args.inputs)
            _check_names(args.inputs, arrays, names,
                         f"the parameters of {self.FUNC} are")
        else:
            shapes = dict(_parse_input_shape(t) for t in args.input_shape)
            unknown = [n for n in shapes if n not in names]
            missing = [n for n in names if n not in shapes]
            if unknown or missing:
                raise _UserError(
                    f"{args.model} is a Relax VM model (its input shapes may be symbolic): give "
                    f"its inputs with --inputs FILE.npz (arrays named {', '.join(names)}) or "
                    f"their shapes with --input-shape NAME:DIMS for random ones" +
                    (f" (missing {', '.join(missing)})" if missing and shapes else "") +
                    (f" (no parameter {', '.join(unknown)})" if unknown else ""))
            arrays = _random_inputs(
                [{"name": n, "shape": shapes[n], "dtype": "float32"} for n in names],
                args.seed or 0)
        self.inputs = {n: arrays[n] for n in names}
        stage.name = "loading the model"
        self.dev = _open_device(args.device)
        self.vm = VirtualMachine(load_module(args.model), self.dev)
        self.args = [array(self.inputs[n]) for n in names]

    def run(self):
        return _flat_outputs(self.vm[self.FUNC](*self.args))

    def profile(self):
        return self.vm.profile(self.FUNC, *self.args)

    def benchmark(self, repeat, number, min_repeat_ms=0):
        return self.vm.time_evaluator(self.FUNC, self.dev, number=number, repeat=repeat,
                                      min_repeat_ms=min_repeat_ms)(*self.args)


# ---- run ------------------------------------------------------------------------------------
def _check_run_args(args):
    if not os.path.isfile(args.model):
        raise _UserError(f"no such model file: {args.model}")
    if args.model.endswith((".a", ".o", ".tar")):
        raise _UserError(f"{args.model}: a static library or object file is linked into a "
                         "program (see apps/graph_deploy); run a model exported as .so")
    if args.benchmark and (args.repeat < 1 or args.number < 1):
        raise _UserError("--repeat and --number must be at least 1")
    if args.warmup_ms < 0:
        raise _UserError(f"--warmup-ms {args.warmup_ms:g}: give a time of at least 0 ms")
    if args.print_top < 0:
        raise _UserError(f"--print-top {args.print_top}: give a number of values, at least 1")
    if args.inputs and args.seed is not None:
        raise _UserError("--seed seeds random inputs; it does nothing with --inputs")
    for flag, path in (("--output", args.output), ("--trace", args.trace)):
        out_dir = os.path.dirname(os.path.abspath(path)) if path else None
        if out_dir and not os.path.isdir(out_dir):
            raise _UserError(f"{flag} {path}: no such directory {out_dir}")


def _print_outputs(outputs, print_top):
    for k, o in enumerate(outputs):
        line = f"output {k}: {_fmt(o)}"
        if o.size and o.dtype.kind in "fiub":
            line += f"  min {o.min():.6g}  max {o.max():.6g}  mean {o.astype('float64').mean():.6g}"
        print(line)
    if print_top > 0 and outputs and outputs[0].size:
        o = outputs[0]
        rows = o.reshape(o.shape[0], -1) if o.ndim > 1 else o.reshape(1, -1)
        k = min(print_top, rows.shape[1])
        for r, row in enumerate(rows[:8]):
            top = np.argsort(-row, kind="stable")[:k]
            print(f"top {k} of output 0" + (f" row {r}" if len(rows) > 1 else "") + ": " +
                  "  ".join(f"[{i}] {row[i]:.6g}" for i in top))
        if len(rows) > 8:
            print(f"(first 8 of {len(rows)} rows)")


def _save_outputs(path, outputs):
    try:
        with open(path, "wb") as f:  # a file object: numpy.savez adds no ".npz" to the name
            np.savez(f, **{f"output_{k}": o for k, o in enumerate(outputs)})
    except OSError as err:
        raise _UserError(f"cannot write --output {path}: {err.strerror or err}") from None
    print(f"outputs saved to {path}")


def _save_trace(path, report):
    try:
        report.save_trace(path)
    except OSError as err:
        raise _UserError(f"cannot write --trace {path}: {err.strerror or err}") from None
    print(f"trace of {len(report.calls)} kernel calls saved to {path} (open it in "
          "https://ui.perfetto.dev or chrome://tracing)")


def _run(args, stage):
    _check_run_args(args)
    stage.name = "reading the model"
    kind = _VMModel if _is_vm_library(args.model) else _GraphModel
    model = kind(args, stage)
    if not args.inputs:
        print(f"no --inputs: random inputs (seed {args.seed or 0}): " +
              ", ".join(f"{k} {_fmt(v)}" for k, v in model.inputs.items()), file=sys.stderr)
    stage.name = "running the model"
    outputs = model.run()  # a VM checks its arguments' shapes and types here (ValueError)
    _print_outputs(outputs, args.print_top)
    if args.output:
        stage.name = "saving the outputs"
        _save_outputs(args.output, outputs)
    if args.profile or args.trace:
        stage.name = "profiling"
        report = model.profile()
        if args.profile:
            print(report.table(sort=True, aggregate=False))
        if args.trace:
            stage.name = "writing the trace"
            _save_trace(args.trace, report)
    if args.benchmark:
        stage.name = "benchmarking"
        if args.warmup_ms > 0:
            model.benchmark(1, 1, min_repeat_ms=args.warmup_ms)
        r = model.benchmark(args.repeat, args.number)
        print(f"latency ({args.repeat} x {args.number} runs, {num_threads()} threads): "
              f"mean {r.mean * 1e3:.4f} ms  median {r.median * 1e3:.4f} ms  "
              f"min {r.min * 1e3:.4f} ms  max {r.max * 1e3:.4f} ms  std {r.std * 1e3:.4f} ms")


def _internal_error(err, stage):
    """Reports an unexpected failure in one line (and its traceback with KILN_TRACEBACK=1)."""
    if os.environ.get("KILN_TRACEBACK", "") not in ("", "0"):
        traceback.print_exception(type(err), err, err.__traceback__)
        hint = ""
    else:
        hint = " " + _TRACEBACK_HINT
    print(f"error: internal error in {stage}: {type(err).__name__}: {_one_line(err)}{hint}",
          file=sys.stderr)
    return 1


def main(argv=None):
    args = _parser().parse_args(argv)
    stage = _Stage(f"the {args.command} command")
    try:
        (_manifest if args.command == "manifest" else _run)(args, stage)
    except _UserError as err:
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 1
    except (OSError, ValueError, RuntimeError) as err:
        # What the runtime raises for a file it cannot read or a model it refuses.
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - anything else: one line, not a traceback
        return _internal_error(err, stage.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
