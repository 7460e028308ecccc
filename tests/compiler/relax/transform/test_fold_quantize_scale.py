"""fold_quantize_scale: Q(clip(DQ(x) * c + t)) with per-channel constants becomes
Q(clip(DQ'(x) + t'), 1): no multiply is left, the quantize's scale is 1, and the int8 result is
the float sequence's on every input value (up to 1 where a float32 rounding crosses a half,
interpreted). A clip that the quantize's saturation already does goes; one inside the type's
range stays. Patterns it does not take (a value used twice, a constant that is not per
channel) stay as they were."""
import numpy as np

from compiler.relax import expr as X
from compiler.relax import interpreter, op
from compiler.relax.block_builder import BlockBuilder
from compiler.relax.struct_info import TensorStructInfo
from compiler.relax.transform.fold_quantize_scale import fold_quantize_scale

C = 6


def c(value, dtype):
    return X.const(np.asarray(value, dtype=dtype), dtype)


def _module(bounds=(0.0, 6.0), sy=0.03, zy=3, scale_shape=(1, C, 1, 1), twice=False):
    """uint8 x [1, C, 16, 16] -> DQ -> * scale -> + shift -> clip -> Q (uint8)."""
    rng = np.random.default_rng(0)
    scale = (rng.random(scale_shape) * 2 + 0.2).astype("float32")
    shift = (rng.standard_normal((1, C, 1, 1)) * 0.5).astype("float32")
    bb = BlockBuilder()
    x = X.Var("x", TensorStructInfo((1, C, 16, 16), "uint8"))
    bb.begin_function("main", None, {"global_symbol": "main", "num_input": 1})
    with bb.dataflow():
        dq = bb.emit(op.qnn.dequantize(x, c(0.05, "float32"), c(7, "int32")))
        y = bb.emit(op.multiply(dq, c(scale, "float32")))
        z = bb.emit(op.add(y, c(shift, "float32")))
        if bounds is not None:
            z = bb.emit(op.clip(z, *bounds))
        q = bb.emit(op.qnn.quantize(z, c(sy, "float32"), c(zy, "int32"), 1, "uint8"))
        out = bb.emit_output(op.add(q, op.astype(y, "uint8")) if twice else q)
    bb.emit_func_output(out, [x])
    return bb.get()


def _ops(mod):
    return [b.value.op.name for block in mod["main"].body.blocks for b in block.bindings
            if isinstance(b.value, X.Call) and isinstance(b.value.op, X.Op)]


def _every_value():
    return np.tile(np.arange(256, dtype="uint8").reshape(16, 16), (1, C, 1, 1))


def _same_values(before, after):
    x = _every_value()
    want = np.asarray(interpreter.run(before, x)).astype(int)
    got = np.asarray(interpreter.run(after, x)).astype(int)
    assert np.abs(got - want).max() <= 1
    assert (got == want).mean() > 0.99


def test_scale_shift_and_clip_fold():
    mod = _module(bounds=(0.5, 4.0))
    after = fold_quantize_scale(mod)
    assert _ops(after) == ["relax.qnn.dequantize", "relax.add", "relax.clip",
                           "relax.qnn.quantize"]
    q, = [b.value for b in after["main"].body.blocks[0].bindings
          if isinstance(b.value, X.Call) and b.value.op.name == "relax.qnn.quantize"]
    assert float(q.args[1].data) == 1.0
    _same_values(mod, after)


def test_clip_the_saturation_covers_goes():
    mod = _module(bounds=(0.0, 6.0), sy=6.0 / 255, zy=0)
    after = fold_quantize_scale(mod)
    assert _ops(after) == ["relax.qnn.dequantize", "relax.add", "relax.qnn.quantize"]
    _same_values(mod, after)


def test_without_clip():
    mod = _module(bounds=None)
    after = fold_quantize_scale(mod)
    assert "relax.multiply" not in _ops(after)
    _same_values(mod, after)


def test_other_patterns_stay():
    for mod in (_module(twice=True), _module(scale_shape=(1, 1, 16, 1))):
        assert "relax.multiply" in _ops(fold_quantize_scale(mod))
