"""The runtime's command line (it imports no compiler module), in the spirit of `tvmc run`:

    python -m microruntime run model.so --inputs in.npz --output out.npz [--print-top 5]
    python -m microruntime run model.so --profile          # per-kernel times
    python -m microruntime run model.so --benchmark --repeat 10 --number 10
    python -m microruntime manifest model.so               # what the model needs and gives

Mistakes (a missing file, an input of the wrong shape, a file that is not a model) print one
line, `error: ...`, on stderr and exit with status 1; wrong usage exits with status 2.
"""
import argparse
import os
import sys

RUN_EPILOG = """\
examples:
  python -m microruntime run model.so                         # random inputs, prints outputs
  python -m microruntime run model.so --inputs in.npz --output out.npz --print-top 5
  python -m microruntime run model.so --benchmark --repeat 10 --number 20
  MR_NUM_THREADS=2 python -m microruntime run model.so --profile

--inputs is a .npz file (numpy.savez) with one array per model input, by input name
(`python -m microruntime manifest model.so` lists them). Without it the inputs are random
(standard normal floats, seed 0). MR_NUM_THREADS sets the number of worker threads."""


class _UserError(Exception):
    pass


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
                       "params, memory, kernels), read from the file without loading or "
                       "running it.")
    m.add_argument("model", help="the model file (.so, .a, .o or .tar)")
    r = sub.add_parser("run", help="run a model (.so) on inputs from a .npz file or random "
                       "ones; print, save, profile or benchmark it",
                       description="Run a model exported as a shared library (.so) by the "
                       "graph executor: set its inputs, run it once, print its outputs "
                       "(and optionally save them, profile each kernel or time the whole run).",
                       epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("model", help="the compiled model (.so)")
    r.add_argument("--inputs", metavar="FILE.npz",
                   help="the input arrays by name (default: random inputs of the right shape)")
    r.add_argument("--output", metavar="FILE.npz",
                   help="save the outputs here (numpy.savez; named output_0, output_1, ...)")
    r.add_argument("--print-top", type=int, metavar="K", default=0,
                   help="print the K largest values of output 0 with their indices (per row)")
    r.add_argument("--profile", action="store_true",
                   help="run kernel by kernel and print each one's time")
    r.add_argument("--benchmark", action="store_true",
                   help="time the whole run: --repeat measurements of --number runs each")
    r.add_argument("--repeat", type=int, default=5, help="measurements (default 5)")
    r.add_argument("--number", type=int, default=10, help="runs per measurement (default 10)")
    r.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    return p


def _manifest(args):
    from .graph_executor import print_manifest

    if not os.path.isfile(args.model):
        raise _UserError(f"no such model file: {args.model}")
    print_manifest(args.model)


def _random_inputs(spec, seed):
    import numpy as np

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


def _load_inputs(path, spec):
    import numpy as np

    if not os.path.isfile(path):
        raise _UserError(f"no such inputs file: {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError) as err:
        raise _UserError(f"{path}: not a .npz file of arrays ({_one_line(err)})") from None
    names = [i["name"] for i in spec]
    missing = [n for n in names if n not in arrays]
    extra = [k for k in arrays if k not in names]
    if missing or extra:
        raise _UserError(f"{path} holds {', '.join(arrays) or 'no arrays'}; the model's inputs "
                         f"are {', '.join(names)}" + (f" (missing {', '.join(missing)})"
                                                      if missing else ""))
    for i in spec:
        a = arrays[i["name"]]
        if tuple(a.shape) != tuple(i["shape"]) or str(a.dtype) != i["dtype"]:
            raise _UserError(f"input {i['name']!r} of {path} is {a.dtype}{list(a.shape)}; "
                             f"the model expects {i['dtype']}{list(i['shape'])}")
    return arrays


def _fmt(a):
    return f"{a.dtype}[{','.join(map(str, a.shape))}]"


_VM_KIND = b"relax.VMExecutable"


def _is_vm_library(path):
    """Whether the library's blob holds a Relax VM executable (its kind, as the blob writes it)."""
    import struct

    with open(path, "rb") as f:
        data = f.read()
    return struct.pack("<Q", len(_VM_KIND)) + _VM_KIND in data


def _flat_outputs(value):
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat_outputs(v)]
    return [value.numpy()]


def _run_vm(args):
    """Runs `main` of a Relax VM library; its inputs come from --inputs (an .npz whose arrays
    are the arguments in order): a VM program's shapes may be symbolic, so none are invented."""
    import numpy as np

    from . import cpu, load_module, nd
    from .relax_vm import VirtualMachine

    if not args.inputs:
        raise _UserError(f"{args.model} is a Relax VM program (its input shapes may be "
                         "symbolic): give its arguments with --inputs ARGS.npz (in order)")
    with np.load(args.inputs) as data:
        inputs = [data[k] for k in data.files]
    vm = VirtualMachine(load_module(args.model), cpu())
    outputs = _flat_outputs(vm["main"](*[nd.array(a) for a in inputs]))
    for k, o in enumerate(outputs):
        line = f"output {k}: {_fmt(o)}"
        if o.size and o.dtype.kind in "fiub":
            line += f"  min {o.min():.6g}  max {o.max():.6g}  mean {o.astype('float64').mean():.6g}"
        print(line)
    if args.output:
        np.savez(args.output, **{f"output_{k}": o for k, o in enumerate(outputs)})
        print(f"outputs saved to {args.output}")


def _run(args):
    import numpy as np

    from . import cpu, load_module
    from .graph_executor import GraphModule, read_manifest

    if not os.path.isfile(args.model):
        raise _UserError(f"no such model file: {args.model}")
    if args.model.endswith((".a", ".o", ".tar")):
        raise _UserError(f"{args.model}: a static library or object file is linked into a "
                         "program (see apps/graph_deploy); run a model exported as .so")
    if _is_vm_library(args.model):
        return _run_vm(args)
    manifest = read_manifest(args.model)
    spec = manifest["inputs"]
    if args.inputs:
        inputs = _load_inputs(args.inputs, spec)
    else:
        inputs = _random_inputs(spec, args.seed)
        print(f"no --inputs: random inputs (seed {args.seed}): " +
              ", ".join(f"{k} {_fmt(v)}" for k, v in inputs.items()), file=sys.stderr)
    dev = cpu()
    gmod = GraphModule(load_module(args.model)["default"](dev))
    gmod.set_input(**inputs)
    gmod.run()
    outputs = [gmod.get_output(i).numpy() for i in range(gmod.get_num_outputs())]
    for k, o in enumerate(outputs):
        line = f"output {k}: {_fmt(o)}"
        if o.size and o.dtype.kind in "fiub":
            line += f"  min {o.min():.6g}  max {o.max():.6g}  mean {o.astype('float64').mean():.6g}"
        print(line)
    if args.print_top > 0 and outputs:
        o = outputs[0]
        rows = o.reshape(o.shape[0], -1) if o.ndim > 1 else o.reshape(1, -1)
        k = min(args.print_top, rows.shape[1])
        for r, row in enumerate(rows[:8]):
            top = np.argsort(-row, kind="stable")[:k]
            print(f"top {k} of output 0" + (f" row {r}" if len(rows) > 1 else "") + ": " +
                  "  ".join(f"[{i}] {row[i]:.6g}" for i in top))
        if len(rows) > 8:
            print(f"(first 8 of {len(rows)} rows)")
    if args.output:
        np.savez(args.output, **{f"output_{k}": o for k, o in enumerate(outputs)})
        print(f"outputs saved to {args.output}")
    if args.profile:
        print(gmod.profile().table(sort=True, aggregate=False))
    if args.benchmark:
        if args.repeat < 1 or args.number < 1:
            raise _UserError("--repeat and --number must be at least 1")
        r = gmod.benchmark(dev, repeat=args.repeat, number=args.number)
        from . import num_threads

        print(f"latency ({args.repeat} x {args.number} runs, {num_threads()} threads): "
              f"mean {r.mean * 1e3:.4f} ms  median {r.median * 1e3:.4f} ms  "
              f"min {r.min * 1e3:.4f} ms  max {r.max * 1e3:.4f} ms  std {r.std * 1e3:.4f} ms")


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        (_manifest if args.command == "manifest" else _run)(args)
    except _UserError as err:
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 1
    except (OSError, ValueError, RuntimeError) as err:
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
