"""Runs the MLPerf Tiny models (mlperf_tiny.py) on the three Cortex-M boards under QEMU with
both executors and prints, per run: flash (text + read-only data + .data's initial values),
RAM (.data + .bss, which holds the arena, + the heap the app took), the arena, the runtime's
share of flash, cycles per inference and whether the output matched the reference (ONNX
Runtime on this machine: atol 1e-5 + rtol 1e-4 for the float models; the same int8 values for
the int8 ones, against ONNX Runtime with graph optimizations off), then each int8 model beside
its float model on the same board and executor.

    python apps/cortex_m/mlperf_table.py [BUILD_DIR] [--jobs N]

Each model is built once per executor (target "c", Cortex-M4F code, which the M7 and the M55
run too) and linked for each board with the Makefile beside this file. The int8 models are
also built for the M55 itself (target "c -mtriple=thumbv8.1m.main-none-eabihf
-mcpu=cortex-m55": GCC compiles for the M55 and the convolutions take MVE's VMLADAVA, both
executors), and with -mattr=-mve (the M55 compiler, SMLAD kernels; AOT), and run on the M55.
Exits with 1 when a run that should work does not; a combination that cannot fit a board is
printed with the reason.
"""
import argparse
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

APP = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(APP))
sys.path.insert(0, APP)

import mlperf_tiny  # noqa: E402

BOARDS = {"m4": "mps2-an386 (M4F)", "m7": "mps2-an500 (M7)", "m55": "mps3-an547 (M55)"}
EXECUTORS = ("aot", "graph")
# What the linker scripts' regions are on each board.
REGIONS = {"m4": {"RAM": "4 MB RAM", "FLASH": "4 MB code memory"},
           "m7": {"RAM": "4 MB RAM", "FLASH": "4 MB code memory"},
           "m55": {"RAM": "512 KB DTCM", "FLASH": "2 MB code SRAM"}}
NAMES = {"kws": "DS-CNN (KWS)", "ic": "ResNet-8 (IC)", "vww": "MobileNetV1-0.25 (VWW)",
         "ad": "AD autoencoder", "kws_int8": "DS-CNN (KWS) int8", "ic_int8": "ResNet-8 (IC) int8"}
# How a model is built, beside the M4F code every board runs: (MODEL_BOARD, DSP, MVE, the
# suffix of its rows' names).
VARIANTS = {"m4": ("m4", "on", "on", ""),
            "nodsp": ("m4", "off", "on", " no SMLAD"),
            "m55": ("m55", "on", "on", " M55 code"),
            "m55nomve": ("m55", "on", "off", " M55 code no MVE")}
# The table's models: each float model, its int8 version after it.
ALL_MODELS = tuple(m for f in mlperf_tiny.MODELS for m in
                   (f, *(q for q, base in mlperf_tiny.INT8_MODELS.items() if base == f)))


def _make(build, board, model, executor, goal, variant="m4"):
    model_board, dsp, mve, _ = VARIANTS[variant]
    cmd = ["make", "-s", "-C", APP, f"PYTHON={sys.executable}", f"BUILD={build}",
           f"BOARD={board}", f"MODEL_BOARD={model_board}", f"MODEL={model}", "KIND=c",
           f"EXECUTOR={executor}", f"DSP={dsp}", f"MVE={mve}", goal]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False)


def _sizes(elf):
    """(flash, .data + .bss) bytes of an ELF (Berkeley sizes: text holds read-only data)."""
    out = subprocess.run(["arm-none-eabi-size", elf], stdout=subprocess.PIPE, text=True,
                         check=True).stdout.splitlines()[1].split()
    text, data, bss = int(out[0]), int(out[1]), int(out[2])
    return text + data, data + bss


def _runtime_flash(map_path):
    """Bytes of code and read-only data the linker kept from the runtime's archive (from the
    link map; a long section name puts its address and size on the next line)."""
    total, section = 0, None
    with open(map_path) as f:
        lines = f.read().split("\n")
    start = next((i for i, x in enumerate(lines) if x.startswith("Linker script and memory map")),
                 0)
    for line in lines[start:]:
        m = re.match(r"^ (\.(?:text|rodata)\S*)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+))?$",
                     line)
        if m:
            section = m.group(1)
            if m.group(2) and "libmicroruntime" in m.group(4):
                total += int(m.group(3), 16)
                section = None
            continue
        m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$", line)
        if m and section and "libmicroruntime" in m.group(3):
            total += int(m.group(2), 16)
        section = None
    return total


def _field(pattern, text, default=None):
    m = re.search(pattern, text, re.M)
    return m.group(1) if m else default


def _out_dir(build, board, model, executor, variant="m4"):
    """The Makefile's build folder of one run."""
    model_board, dsp, mve, _ = VARIANTS[variant]
    return os.path.join(build, f"{board}-c-{'aot-' if executor == 'aot' else ''}"
                               f"{'nodsp-' if dsp == 'off' else ''}"
                               f"{'nomve-' if mve == 'off' else ''}"
                               f"{model_board + 'code-' if model_board != board else ''}{model}")


def run_one(build, board, model, executor, variant="m4"):
    """One row: a dict of what was measured, or the reason it cannot run. variant: how the
    model was built (VARIANTS: "m4" the M4F code, "nodsp" with -mattr=-dsp, "m55" for the M55
    with its MVE kernels, "m55nomve" for the M55 without them)."""
    row = {"board": board, "model": model, "executor": executor, "variant": variant}
    link = _make(build, board, model, executor, "all", variant)
    overflow = re.findall(r"region `(\w+)' overflowed by (\d+) bytes", link.stdout)
    if link.returncode != 0:
        if overflow:
            row["reason"] = "does not fit: " + ", ".join(
                f"{REGIONS[board].get(r, r)} short by {int(n) // 1024} KB" for r, n in overflow)
        else:
            row["error"] = link.stdout[-2000:]
        return row
    out = _out_dir(build, board, model, executor, variant)
    elf = os.path.join(out, "app.elf")
    row["flash"], static = _sizes(elf)
    row["runtime"] = _runtime_flash(os.path.join(out, "app.map"))
    run = _make(build, board, model, executor, "run", variant)
    text = run.stdout
    heap = int(_field(r"^heap: (\d+) bytes", text, "0"))
    row["ram"] = static + heap
    row["arena"] = int(_field(r"^arena: (\d+) bytes", text, "0"))
    row["cycles"] = int(_field(r"^cycles: (\d+)", text, "0"))
    row["error_max"] = _field(r"max abs error (\S+)", text)
    if model in mlperf_tiny.INT8_MODELS and row["error_max"] is not None:
        # atol is half a step of the output's scale: the error in steps of the int8 output
        step = 2 * float(_field(r"\(atol (\S+), rtol", text, "0"))
        row["error_max"] = f"{float(row['error_max']) / step:g} steps" if step else "?"
    row["match"] = run.returncode == 0 and text.rstrip().endswith("PASS")
    if not row["match"]:
        row["error"] = _field(r"^(error: .*)$", text) or text[-2000:]
        if "out of memory" in row["error"]:   # the heap left beside the arena is too small
            arena = int(_arena_bytes(_out_dir(build, VARIANTS[variant][0], model, executor,
                                              variant))) // 1024
            row = {k: row[k] for k in ("board", "model", "executor", "variant")}
            row["reason"] = (f"does not fit: {REGIONS[board]['RAM']} holds the {arena} KB arena "
                             "but not the executor's heap (out of memory at load)")
    return row


def _arena_bytes(model_dir):
    """The arena the app declares (model_data.h's KILN_MODEL_ARENA_BYTES)."""
    with open(os.path.join(model_dir, "model_data.h")) as f:
        return _field(r"#define KILN_MODEL_ARENA_BYTES (\d+)", f.read(), "0")


def _kb(n):
    return f"{n / 1024:,.1f}"


def _name(row):
    return NAMES[row["model"]] + VARIANTS[row.get("variant", "m4")][3]


def print_table(rows):
    head = (f"{'model':<36} {'board':<18} {'executor':<8} {'flash KB':>9} {'runtime KB':>10} "
            f"{'RAM KB':>8} {'arena KB':>9} {'cycles':>13}  match")
    print(head)
    print("-" * len(head))
    for r in rows:
        lead = f"{_name(r):<36} {BOARDS[r['board']]:<18} {r['executor']:<8}"
        if "reason" in r:
            print(f"{lead} {r['reason']}")
        elif "flash" not in r:
            print(f"{lead} build failed")
        else:
            match = f"yes (max error {r['error_max']})" if r["match"] else "NO"
            if r["match"] and r["model"] in mlperf_tiny.INT8_MODELS:
                match = f"yes (equal int8, max error {r['error_max']})"
            print(f"{lead} {_kb(r['flash']):>9} {_kb(r['runtime']):>10} {_kb(r['ram']):>8} "
                  f"{_kb(r['arena']):>9} {r['cycles']:>13,}  {match}")
    print("flash: text + read-only data (weights) + .data's initial values; runtime: the part "
          "of flash from libmicroruntime (graph executor) or libmicroruntime_aot (AOT "
          "runtime); RAM: .data + .bss (arena, input and output buffers) + heap; cycles: "
          "instructions executed per inference (QEMU -icount shift=0, counted with SysTick; "
          "QEMU models no DWT cycle counter, caches or pipeline). For comparison: TFLite "
          "Micro's framework is about 16-20 KB of flash (published). int8: the model quantized "
          "by ONNX Runtime (QDQ, per channel); its outputs are compared as int8 values (atol "
          "half a step of the output's scale). no SMLAD: the same model built with -mattr=-dsp: "
          "the same kernels with each 16-bit pair's products in plain C instead of the SMLAD "
          "intrinsic (GCC makes SMLABB + SMLATT of them for the Cortex-M4). M55 code: built for "
          "the M55 (c -mtriple=thumbv8.1m.main-none-eabihf -mcpu=cortex-m55: GCC's code for "
          "the M55, the convolutions by MVE's VMLADAVA.S16); no MVE: the same with -mattr=-mve "
          "(the SMLAD kernels).")
    print_int8_ratios(rows)


def print_int8_ratios(rows):
    """Each int8 run's flash, RAM and cycles as a fraction of its float model's on the same
    board and executor (and, built otherwise than the M4F code, of the M4F code's int8 run)."""
    done = {(r["model"], r["board"], r["executor"], r["variant"]): r for r in rows
            if r.get("match")}
    lines = []
    for (model, board, executor, variant), r in done.items():
        base = mlperf_tiny.INT8_MODELS.get(model)
        f = done.get((base, board, executor, "m4")) if variant == "m4" else \
            done.get((model, board, executor, "m4"))
        if base is None or f is None:
            continue
        what = f"{_name(r)} / " + {"m4": "float", "nodsp": "SMLAD"}.get(variant, "M4F code")
        lines.append(f"{what:<48} {BOARDS[board]:<18} {executor:<8} "
                     f"{r['flash'] / f['flash']:>7.2f} {r['ram'] / f['ram']:>7.2f} "
                     f"{r['cycles'] / f['cycles']:>7.2f}")
    if lines:
        head = f"{'ratio':<48} {'board':<18} {'executor':<8} {'flash':>7} {'RAM':>7} " \
               f"{'cycles':>7}"
        print(f"\n{head}\n{'-' * len(head)}")
        print("\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build", "cortex_m"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--models", default=",".join(ALL_MODELS))
    ap.add_argument("--boards", default=",".join(BOARDS))
    args = ap.parse_args(argv)
    build = os.path.abspath(args.build)
    models, boards = args.models.split(","), args.boards.split(",")
    # First each model (once per executor) and each board's runtimes, then the runs.
    # The int8 models also without the SMLAD intrinsic (-mattr=-dsp), on the M4F with AOT,
    # and built for the M55 (with MVE: both executors; without: AOT), on the M55.
    int8 = [m for m in models if m in mlperf_tiny.INT8_MODELS]
    extra = ([("m4", m, "aot", "nodsp") for m in int8] if "m4" in boards else []) + \
        ([("m55", m, e, "m55") for m in int8 for e in EXECUTORS] +
         [("m55", m, "aot", "m55nomve") for m in int8] if "m55" in boards else [])
    jobs = [("m4", m, e, "model") for m in models for e in EXECUTORS] + \
        [(b, m, e, "model", v) for b, m, e, v in extra] + \
        [(b, models[0], "graph", "runtime") for b in boards]
    failed = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for job, res in zip(jobs, pool.map(lambda j: _make(build, *j), jobs)):
            if res.returncode != 0:
                failed.append(f"make {job[3]} ({job[0]}, {job[1]}, {job[2]}):\n"
                              f"{res.stdout[-3000:]}")
        if failed:
            print("\n".join(failed))
            return 1
        runs = [(b, m, e) for m in models for b in boards for e in EXECUTORS] + extra
        runs.sort(key=lambda r: (ALL_MODELS.index(r[1]) if r[1] in ALL_MODELS else 0,
                                 len(r) > 3))
        rows = list(pool.map(lambda r: run_one(build, *r), runs))
    print_table(rows)
    bad = [r for r in rows if "reason" not in r and not r.get("match")]
    for r in bad:
        print(f"\n{_name(r)} on {r['board']} ({r['executor']}):\n{r.get('error', '')}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
