"""Unary and binary elementwise operators (with numpy broadcasting), clip, astype, where."""
from .... import topi
from ....ir.errors import UnsupportedOpError


def _scalar(v):
    return v.value if hasattr(v, "value") and not hasattr(v, "shape") else v


def _topi(path: str):
    """The operator-library function at `path` ("exp", "nn.relu"), found when first used."""
    def get():
        obj = topi
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                raise UnsupportedOpError(f"the operator library has no topi.{path}")
        return obj
    return get


def _unary(path: str):
    fn = _topi(path)
    return lambda call, a: fn()(a[0])


def _binary(path: str):
    fn = _topi(path)
    return lambda call, a: fn()(a[0], a[1])


def _square(call, a):
    return topi.multiply(a[0], a[0])


def _clip(call, a):
    return topi.clip(a[0], _scalar(a[1]), _scalar(a[2]))


def _astype(call, a):
    return topi.cast(a[0], call.attrs.dtype)


def _silu(call, a):
    return topi.multiply(a[0], topi.sigmoid(a[0]))


def _gelu_tanh(call, a):
    raise UnsupportedOpError("relax.nn.gelu_tanh has no kernel yet; use relax.nn.gelu")


LEGALIZE = {
    "relax.abs": _unary("abs"), "relax.ceil": _unary("ceil"),
    "relax.cos": _unary("cos"), "relax.erf": _unary("erf"),
    "relax.exp": _unary("exp"), "relax.floor": _unary("floor"),
    "relax.isnan": _unary("isnan"), "relax.log": _unary("log"),
    "relax.negative": _unary("negative"), "relax.round": _unary("round"),
    "relax.rsqrt": _unary("rsqrt"), "relax.sigmoid": _unary("sigmoid"),
    "relax.sign": _unary("sign"), "relax.sin": _unary("sin"),
    "relax.sqrt": _unary("sqrt"), "relax.tanh": _unary("tanh"),
    "relax.logical_not": _unary("logical_not"), "relax.square": _square,
    "relax.clip": _clip, "relax.astype": _astype,
    "relax.add": _binary("add"), "relax.subtract": _binary("subtract"),
    "relax.multiply": _binary("multiply"), "relax.divide": _binary("divide"),
    "relax.power": _binary("power"), "relax.maximum": _binary("maximum"),
    "relax.minimum": _binary("minimum"), "relax.floor_divide": _binary("floor_divide"),
    "relax.floor_mod": _binary("floor_mod"), "relax.equal": _binary("equal"),
    "relax.not_equal": _binary("not_equal"), "relax.greater": _binary("greater"),
    "relax.greater_equal": _binary("greater_equal"), "relax.less": _binary("less"),
    "relax.less_equal": _binary("less_equal"),
    "relax.logical_and": _binary("logical_and"), "relax.logical_or": _binary("logical_or"),
    "relax.where": lambda call, a: topi.where(a[0], a[1], a[2]),
    "relax.nn.relu": _unary("nn.relu"),
    "relax.nn.leakyrelu": lambda call, a: topi.nn.leaky_relu(a[0], call.attrs.alpha),
    "relax.nn.prelu": lambda call, a: topi.nn.prelu(a[0], a[1], call.attrs.axis),
    "relax.nn.gelu": _unary("nn.gelu"), "relax.nn.gelu_tanh": _gelu_tanh,
    "relax.nn.silu": _silu,
}
