"""`python -m compiler compile`: an ONNX model → one file (.so, .tar or a --system-lib .a) that
holds the graph, the weights and the compiled kernels, as TVM's `tvmc compile` does.

Stages (one progress line each on stderr, and one per kernel as it is lowered; --quiet drops
them): import the model (compiler.frontend.from_onnx), plan it (compiler.relay.plan: weights
folded, operators fused into kernels, kernels lowered, storage planned), generate code for the
kernels (compiler.relay.build_from_plan, so nothing is planned twice) and export. A summary on
stdout ends it: inputs, outputs, kernels, fused groups, memory with and without planning, the
file's size and the compile time.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import nullcontext
from typing import Dict, List, Tuple

from ..autotvm.dispatch import apply_history_best
from ..codegen import host_codegen_available
from ..frontend import from_onnx
from ..frontend.onnx import load_model
from ..ir.errors import InternalError
from ..relax.backend.aot.build import build_aot
from ..relax.vm_build import build as relax_build
from ..relay import build_from_plan, plan
from ..relay.build_module import control_flow
from ..target import Target
from .common import CliError, Stage, one_line, parse_shape

DESCRIPTION = """\
Compile an ONNX model into ONE file the microruntime runs: the graph, the weights and the
compiled kernels together. Run the result with `python -m microruntime run MODEL.so`, or link a
`--system-lib` .a into a C program (apps/graph_deploy/main.c)."""

EPILOG = """\
examples:
  python -m compiler compile model.onnx -o model.so
  python -m compiler compile model.onnx --input-shape x:1,3,224,224 -o model.so
  python -m compiler compile model.onnx --system-lib -o model.a      # for static linking
  python -m compiler compile model.onnx --target "c -mcpu=generic" -o model.so
  python -m compiler compile model.onnx --executor aot --system-lib -o model.a
      # one run function tvmgen_default_run + tvmgen_default.h beside model.a (apps/aot_deploy)

A model whose inputs have named (symbolic) dims, such as a batch dim "N", is built for the
Relax VM (one library that runs any size of those dims); give every such input's shape with
--input-shape NAME:D1,D2,... to build it for the graph executor instead. A failure that is
no mistake in the command is reported as "error: internal error in <stage>: ..."; set
KILN_TRACEBACK=1 to see its traceback."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "compile", help="compile an ONNX model into one .so / .a / .tar file",
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the ONNX model file (.onnx)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="where to write the model: .so (shared library, the default: "
                        "MODEL's name with .so), .tar (object files to link), or .a (static "
                        "library; implies --system-lib)")
    p.add_argument("--target", default=None,
                   help='what to generate code for: "llvm" (the default when llvmlite is '
                        'installed) or "c" (C99 compiled by the system cc), with options such '
                        'as "llvm -mcpu=generic" or "llvm -mtriple=aarch64-linux-gnu"')
    p.add_argument("--system-lib", action="store_true",
                   help="build a system library: the model registers itself when linked into "
                        "a program, which then needs no dlopen (use with -o model.a)")
    p.add_argument("--executor", choices=("graph", "aot"), default="graph",
                   help="graph (the default): graph JSON run by the graph executor; aot: one "
                        "generated C run function with the memory plan and weights built in, "
                        "and its header tvmgen_default.h written beside the output")
    p.add_argument("--input-shape", action="append", default=[], metavar="NAME:DIMS",
                   help="an input's shape, e.g. x:1,3,224,224; needed for inputs with named "
                        "(symbolic) dims, repeat it for several inputs")
    p.add_argument("--dtype", default="float32",
                   help="the type of inputs whose type the model leaves out (default float32)")
    p.add_argument("--opt-level", type=int, choices=range(0, 4), metavar="{0,1,2,3}",
                   help="the code generator's optimization level (default: the target's, 3)")
    p.add_argument("--tuning-log", metavar="FILE",
                   help="build kernels with the best configs of this tuning log (from "
                        "`python -m compiler tune`); kernels not in it keep the defaults")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress lines on stderr (the summary is still printed)")
    p.set_defaults(run=run)


class _Progress:
    """Prints a progress line (unless quiet) and names the stage for an internal error."""

    def __init__(self, quiet: bool, stage: Stage):
        self.quiet = quiet
        self.stage = stage
        self.start = time.perf_counter()

    def __call__(self, text: str) -> None:
        self.stage.name = text
        if not self.quiet:
            print(f"[{time.perf_counter() - self.start:6.1f}s] {text}", file=sys.stderr,
                  flush=True)


def run(args) -> int:
    try:
        summary = compile_model(args)
    except CliError as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 1
    except InternalError:
        raise  # not the user's mistake: reported by cli.main with a hint
    except (OSError, RuntimeError, ValueError) as err:
        # CompilerError (ModelError, UnsupportedOpError, IRError, TargetError, ...) is a
        # RuntimeError; what remains are files that cannot be read or written.
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 1
    print(summary)
    return 0


def _input_shapes(graph, given: List[str]) -> Tuple[Dict[str, Tuple[int, ...]], List[str]]:
    """The shapes of --input-shape by input name, checked against the model, and the inputs
    whose named (symbolic) dims stay unbound (the model is then built for the VM)."""
    inits = {t.name for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in inits]
    names = [v.name for v in inputs]
    shapes: Dict[str, Tuple[int, ...]] = {}
    for text in given:
        name, shape = parse_shape(text)
        if name == "":
            if len(names) != 1:
                raise CliError(f"--input-shape {text!r} names no input and the model has "
                               f"{len(names)} ({', '.join(names)}): write NAME:DIMS")
            name = names[0]
        if name not in names:
            raise CliError(f"--input-shape {text!r}: the model has no input {name!r}; its "
                           f"inputs are {', '.join(names) or '(none)'}")
        shapes[name] = shape
    symbolic: List[str] = []
    for v in inputs:
        if v.name in shapes:
            continue
        t = v.type.tensor_type
        if not t.HasField("shape"):
            raise CliError(f"input {v.name!r} has no shape in the model: give it with "
                           f"--input-shape {v.name}:D1,D2,...")
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                for d in t.shape.dim]
        if any(isinstance(d, str) for d in dims):
            symbolic.append(f"{v.name}[{','.join(map(str, dims))}]")
    return shapes, symbolic


def _target(args) -> str:
    target = args.target
    if target is None:
        target = "llvm" if host_codegen_available("llvm") else "c"
    if (args.system_lib or args.output.endswith(".a")) and "--system-lib" not in target:
        target += " --system-lib"
    if args.opt_level is not None:
        if "-opt-level" in target:
            raise CliError("give the optimization level once: --opt-level or -opt-level in "
                           "--target, not both")
        target += f" -opt-level={args.opt_level}"
    return target


def _fmt_bytes(n: int) -> str:
    if n < 10 * 1024:
        return f"{n} B"
    if n < 10 * 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


def compile_model(args) -> str:
    """Compiles and exports (with the configs of --tuning-log); the summary to print."""
    tuning_log = getattr(args, "tuning_log", None)
    if tuning_log is None:
        return _compile_model(args, nullcontext())
    if not os.path.isfile(tuning_log):
        raise CliError(f"--tuning-log {tuning_log}: no such file")
    ctx = apply_history_best(tuning_log)
    summary = _compile_model(args, ctx)
    return summary + f"\n  tuned:    {len(set(ctx.applied))} kernel anchors from " \
        f"{tuning_log} ({len(ctx)} tuned in the log)"


def _stage(args) -> Stage:
    """The Stage of the command line (`args.stage`), or a new one when called directly."""
    stage = getattr(args, "stage", None)
    if not isinstance(stage, Stage):
        stage = args.stage = Stage("compile")
    return stage


def _compile_model(args, tuning) -> str:
    if not os.path.isfile(args.model):
        raise CliError(f"no such model file: {args.model}")
    if args.output is None:
        stem = os.path.splitext(os.path.basename(args.model))[0]
        args.output = stem + (".a" if args.system_lib else ".so")
    if not args.output.endswith((".so", ".a", ".tar")):
        raise CliError(f"-o {args.output}: the output must end in .so, .a or .tar")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CliError(f"-o {args.output}: no such directory {out_dir}")
    progress = _Progress(args.quiet, _stage(args))
    t0 = time.perf_counter()

    target = str(Target(_target(args)))
    progress(f"importing {args.model}")
    proto = load_model(args.model)
    shapes, symbolic = _input_shapes(proto.graph, args.input_shape)
    mod, params = from_onnx(proto, shape=shapes or None, dtype=args.dtype)
    t_import = time.perf_counter()
    flow = control_flow(mod)
    executor = getattr(args, "executor", "graph")
    if executor == "aot" and (symbolic or flow):
        why = f"symbolic dims in {', '.join(symbolic)}" if symbolic else flow
        raise CliError(f"--executor aot runs one sequence of kernels of static shapes, but the "
                       f"model has {why}: give --input-shape for symbolic dims, or leave out "
                       "--executor aot (such a model is built for the Relax VM)")
    if symbolic or flow:
        why = f"symbolic dims in {', '.join(symbolic)}" if symbolic else flow
        with tuning:
            return _compile_for_vm(args, mod, params, target, symbolic, why, progress, t0,
                                   t_import)

    progress("optimizing: folding weights and batch norms, fusing operators into kernels")

    def on_kernel(k: int, total: int, name: str) -> None:
        progress(f"lowering kernel {k}/{total}: {name}")

    with tuning:
        lowered, graph = plan(mod, params, progress=on_kernel, target=target)
    t_plan = time.perf_counter()

    progress(f"generating code for {graph.num_kernels} kernels ({target})")
    if executor == "aot":
        factory = build_aot(lowered, graph, target,
                            output_names=[o.name for o in proto.graph.output])
    else:
        factory = build_from_plan(lowered, graph, target=target)
    t_codegen = time.perf_counter()
    progress(f"writing {args.output}")
    factory.export_library(args.output)
    header = factory.export_header(out_dir) if executor == "aot" else None
    t_end = time.perf_counter()

    g = json.loads(graph.graph_json)
    calls = [n for n in g["nodes"]
             if n["op"] == "tvm_op" and n["attrs"].get("func_name") != "__nop"]
    ins, outs = _io(g, graph.params, [o.name for o in proto.graph.output])
    saved = graph.intermediate_bytes - graph.planned_bytes
    pct = 100.0 * saved / graph.intermediate_bytes if graph.intermediate_bytes else 0.0
    size = os.path.getsize(args.output)
    lines = [
        f"compiled {args.model} -> {args.output}",
        f"  target:   {target}",
        f"  inputs:   {ins}",
        f"  outputs:  {outs}",
        f"  graph:    {len(proto.graph.node)} ONNX nodes -> {len(calls)} fused groups "
        f"(kernel calls), {graph.num_kernels} distinct kernels",
        f"  memory:   intermediates {_fmt_bytes(graph.planned_bytes)} planned vs "
        f"{_fmt_bytes(graph.intermediate_bytes)} without planning ({pct:.0f}% saved); "
        f"{_fmt_bytes(graph.memory.total_bytes)} in all with inputs, outputs and weights",
        f"  weights:  {len(graph.params)} params, "
        f"{_fmt_bytes(sum(int(v.nbytes) for v in graph.params.values()))}",
        f"  file:     {_fmt_bytes(size)} ({size} bytes)",
    ]
    if header is not None:
        lines.append(f"  executor: AOT: tvmgen_default_run, header {header}, workspace "
                     f"{factory.plan.workspace_bytes} bytes (TVMGEN_DEFAULT_WORKSPACE_SIZE)")
    lines += [
        f"  time:     {t_end - t0:.1f} s (import {t_import - t0:.1f}, plan "
        f"{t_plan - t_import:.1f}, code generation {t_codegen - t_plan:.1f}, export "
        f"{t_end - t_codegen:.1f})",
    ]
    return "\n".join(lines)


def _compile_for_vm(args, mod, params, target, symbolic, why, progress, t0, t_import) -> str:
    progress(f"{why}: building for the Relax VM")
    ex = relax_build(mod, target, params=params)
    t_build = time.perf_counter()
    progress(f"writing {args.output}")
    ex.export_library(args.output)
    t_end = time.perf_counter()
    table = ex.exec_bytes.func_table
    funcs = [f.name for f in table if f.kind == 1]
    kernels = [f.name for f in table if f.kind == 0 and not f.name.startswith("vm.builtin.")]
    size = os.path.getsize(args.output)
    lines = [
        f"compiled {args.model} -> {args.output} (Relax VM)",
        f"  target:   {target}",
        f"  inputs:   {', '.join(symbolic)} (symbolic dims checked at each call)" if symbolic
        else f"  why VM:   {why}",
        f"  program:  {len(funcs)} VM functions ({', '.join(funcs)}), {len(kernels)} kernels, "
        f"{len(ex.exec_bytes.instr_offset)} instructions",
        f"  weights:  {len(params)} params, "
        f"{_fmt_bytes(sum(int(getattr(v, 'nbytes', 0)) for v in params.values()))}",
        f"  file:     {_fmt_bytes(size)} ({size} bytes)",
        f"  time:     {t_end - t0:.1f} s (import {t_import - t0:.1f}, build "
        f"{t_build - t_import:.1f}, export {t_end - t_build:.1f})",
    ]
    return "\n".join(lines)


def _io(g: dict, weights, out_names) -> Tuple[str, str]:
    """`name dtype[shape]` of the graph's inputs (not its weights) and outputs."""
    shapes, dtypes, row = g["attrs"]["shape"][1], g["attrs"]["dltype"][1], g["node_row_ptr"]
    ins = [(g["nodes"][nid]["name"], dtypes[row[nid]], shapes[row[nid]])
           for nid in g["arg_nodes"] if g["nodes"][nid]["name"] not in weights]
    if len(out_names) != len(g["heads"]):
        out_names = [f"#{k}" for k in range(len(g["heads"]))]
    outs = [(out_names[k], dtypes[row[h[0]] + h[1]], shapes[row[h[0]] + h[1]])
            for k, h in enumerate(g["heads"])]

    def fmt(items):
        return ", ".join(f"{n} {d}[{','.join(map(str, s))}]" for n, d, s in items)

    return fmt(ins), fmt(outs)
