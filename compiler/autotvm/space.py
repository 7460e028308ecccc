"""The search space of a template: named knobs, each with a finite list of values, and one
point of it (a config).

A template declares its knobs by calling `cfg.define_split / define_knob / define_reorder` and
reads them back with `cfg["name"]`. It is run three ways:

- with a `ConfigSpace`, which records each knob (and the FLOP count the template reports with
  `cfg.add_flop`); `cfg["name"]` then answers the knob's first value, so the template can
  build its schedule all the same;
- with a `ConfigEntity` (one point, `space.get(i)`): define_* do nothing, `cfg["name"]` is
  that point's value;
- with a `FallbackConfigEntity`: the template's defaults (`cfg.is_fallback` is True, so a
  template may leave its library schedule's own defaults in place).

Points are numbered in mixed radix, the first knob varying slowest: index <-> one value per
knob. `len(space)` is the number of points.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from ..ir.errors import CompilerError


class SpaceError(CompilerError):
    """A template declared or asked for a knob in a way the search space cannot hold."""


# ---- the value of one knob ----------------------------------------------------------------

@dataclass(frozen=True)
class SplitEntity:
    """Factors of one loop, outermost first; `size[0]` is -1 (the outer extent, whatever the
    inner factors leave)."""
    size: Tuple[int, ...]

    def apply(self, s, op, axis) -> list:
        """Splits `axis` of stage `s[op]` by the inner factors; the axes, outermost first."""
        stage = s[op]
        axes = []
        for factor in reversed(self.size[1:]):
            axis, inner = stage.split(axis, factor=factor)
            axes.append(inner)
        axes.append(axis)
        return axes[::-1]

    @property
    def value(self):
        return list(self.size)


@dataclass(frozen=True)
class KnobEntity:
    """One value from a list (`val`)."""
    val: Any

    @property
    def value(self):
        return self.val


@dataclass(frozen=True)
class ReorderEntity:
    """A permutation of some axes: `perm[k]` is the position in the given axes of the k-th
    loop, outermost first."""
    perm: Tuple[int, ...]

    def apply(self, s, op, axes) -> list:
        ordered = [axes[p] for p in self.perm]
        s[op].reorder(*ordered)
        return ordered

    @property
    def value(self):
        return list(self.perm)


# ---- the values of one knob -----------------------------------------------------------------

@dataclass(frozen=True)
class Knob:
    """A knob of the space: its name, kind ("split", "knob", "reorder") and its values."""
    name: str
    kind: str
    entities: Tuple[Any, ...]

    def __len__(self) -> int:
        return len(self.entities)

    def index_of(self, value) -> int:
        """The position of the entity whose JSON value is `value`."""
        for k, e in enumerate(self.entities):
            if e.value == value:
                return k
        raise SpaceError(f"knob {self.name!r} has no value {value!r}; its values are "
                         f"{[e.value for e in self.entities][:8]}...")


def _divisors(n: int) -> List[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _split_sizes(extent: int, policy: str, num_outputs: int, max_factor: Optional[int]):
    """The inner-factor tuples (num_outputs - 1 of them, outer to inner) of a split."""
    if policy == "factors":
        choices = _divisors(extent)
    elif policy == "power2":
        choices = [1 << k for k in range(extent.bit_length()) if (1 << k) <= extent]
    else:
        raise SpaceError(f"define_split: unknown policy {policy!r}; use 'factors' or 'power2'")
    if max_factor is not None:
        choices = [c for c in choices if c <= max_factor]
    out = []
    for combo in itertools.product(choices, repeat=num_outputs - 1):
        prod = 1
        for c in combo:
            prod *= c
        if policy == "factors" and extent % prod:
            continue
        if prod > extent:
            continue
        out.append(combo)
    return out


def _extent(axis_or_extent) -> int:
    if isinstance(axis_or_extent, int):
        return axis_or_extent
    dom = getattr(axis_or_extent, "dom", None)
    ext = getattr(dom, "extent", None)
    value = getattr(ext, "value", ext)
    if isinstance(value, int):
        return value
    raise SpaceError(f"define_split needs a constant extent, got {axis_or_extent!r}: pass the "
                     "loop's extent as an int")


# ---- the space, a point, the defaults ---------------------------------------------------

class ConfigSpace:
    """All points of a template's knobs (see the module docstring)."""

    is_fallback = False

    def __init__(self):
        self.knobs: Dict[str, Knob] = {}
        self.flop = 0.0

    # -- declaring knobs (a template calls these) --
    def define_split(self, name: str, axis, policy: str = "factors", num_outputs: int = 2,
                     max_factor: Optional[int] = None) -> None:
        """A knob splitting a loop of `axis`'s extent (an int or a te IterVar) into
        `num_outputs` loops: "factors" takes exact divisors, "power2" powers of two (the outer
        loop then rounds up)."""
        if num_outputs < 2:
            raise SpaceError(f"define_split {name!r}: num_outputs must be at least 2")
        sizes = _split_sizes(_extent(axis), policy, num_outputs, max_factor)
        self._add(Knob(name, "split", tuple(SplitEntity((-1,) + c) for c in sizes)))

    def define_knob(self, name: str, candidates: Sequence, default=None) -> None:
        """A knob taking one of `candidates` (JSON values: ints, floats, bools, strings);
        `default` is what a FallbackConfigEntity reads (else the first candidate)."""
        if not candidates:
            raise SpaceError(f"define_knob {name!r}: give at least one candidate")
        self._add(Knob(name, "knob", tuple(KnobEntity(c) for c in candidates)))

    def define_reorder(self, name: str, axes, candidates: Sequence[Sequence[int]]) -> None:
        """A knob choosing a loop order among `candidates`, each a permutation of
        range(len(axes)) (`axes`: the axes or their count)."""
        n = axes if isinstance(axes, int) else len(axes)
        perms = []
        for c in candidates:
            if sorted(c) != list(range(n)):
                raise SpaceError(f"define_reorder {name!r}: {list(c)} is not a permutation of "
                                 f"0..{n - 1}")
            perms.append(ReorderEntity(tuple(c)))
        if not perms:
            raise SpaceError(f"define_reorder {name!r}: give at least one order")
        self._add(Knob(name, "reorder", tuple(perms)))

    def add_flop(self, flop: float) -> None:
        """Adds to the operation count of the workload (for GFLOP/s)."""
        self.flop += float(flop)

    def _add(self, knob: Knob) -> None:
        if not knob.entities:
            raise SpaceError(f"knob {knob.name!r} has no value")
        if knob.name in self.knobs:
            raise SpaceError(f"knob {knob.name!r} is defined twice")
        self.knobs[knob.name] = knob

    # -- reading knobs while the space is being declared: the first value --
    def __getitem__(self, name: str):
        return self.knobs[name].entities[0]

    # -- the points --
    def __len__(self) -> int:
        n = 1
        for k in self.knobs.values():
            n *= len(k)
        return n

    def dims(self) -> List[int]:
        return [len(k) for k in self.knobs.values()]

    def point_to_knob_indices(self, index: int) -> List[int]:
        if not 0 <= index < len(self):
            raise SpaceError(f"config index {index} is outside the space of {len(self)} points")
        out = []
        for d in reversed(self.dims()):
            out.append(index % d)
            index //= d
        return out[::-1]

    def knob_indices_to_point(self, indices: Sequence[int]) -> int:
        index = 0
        for i, d in zip(indices, self.dims()):
            index = index * d + i
        return index

    def get(self, index: int) -> "ConfigEntity":
        """The point numbered `index`."""
        ks = self.point_to_knob_indices(index)
        entities = {name: knob.entities[i] for (name, knob), i in zip(self.knobs.items(), ks)}
        return ConfigEntity(index, entities, self.flop)

    def from_values(self, values: Dict[str, Any]) -> "ConfigEntity":
        """The point whose knobs have these JSON values (as `ConfigEntity.values()` gives)."""
        missing = set(self.knobs) ^ set(values)
        if missing:
            raise SpaceError(f"config knobs {sorted(values)} do not match the space's "
                             f"{sorted(self.knobs)}")
        return self.get(self.knob_indices_to_point(
            [k.index_of(values[name]) for name, k in self.knobs.items()]))

    def __iter__(self) -> Iterator["ConfigEntity"]:
        for i in range(len(self)):
            yield self.get(i)

    def __repr__(self) -> str:
        knobs = ", ".join(f"{n}: {k.kind} x{len(k)}" for n, k in self.knobs.items())
        return f"ConfigSpace({len(self)} points; {knobs})"


class ConfigEntity:
    """One point of a space: a value per knob. define_* are no-ops, so the template that
    declared the space runs unchanged with a point."""

    is_fallback = False

    def __init__(self, index: int, entities: Dict[str, Any], flop: float = 0.0):
        self.index = index
        self._entities = dict(entities)
        self.flop = flop

    def __getitem__(self, name: str):
        try:
            return self._entities[name]
        except KeyError:
            raise SpaceError(f"config has no knob {name!r}; its knobs are "
                             f"{sorted(self._entities)}") from None

    def define_split(self, name, *args, **kwargs) -> None:
        self._check(name)

    def define_knob(self, name, *args, **kwargs) -> None:
        self._check(name)

    def define_reorder(self, name, *args, **kwargs) -> None:
        self._check(name)

    def add_flop(self, flop: float) -> None:
        pass

    def _check(self, name: str) -> None:
        if name not in self._entities:
            raise SpaceError(f"config has no knob {name!r}: it is not from this template's "
                             "space")

    def values(self) -> Dict[str, Any]:
        """{knob: JSON value}: what a log records."""
        return {n: e.value for n, e in self._entities.items()}

    def __eq__(self, other) -> bool:
        return isinstance(other, ConfigEntity) and self.values() == other.values()

    def __hash__(self) -> int:
        return hash(repr(sorted(self.values().items())))

    def __repr__(self) -> str:
        return f"ConfigEntity({self.index}, {self.values()})"


class FallbackConfigEntity(ConfigSpace):
    """The template's defaults: `cfg.is_fallback` is True, and each knob reads as its
    default (a split: no inner splitting; a knob: its `default` or first candidate; a
    reorder: the identity). A template should prefer its library's own defaults when
    `is_fallback` (the GEMM template then passes no keyword)."""

    is_fallback = True
    index = -1

    def define_split(self, name, axis, policy="factors", num_outputs=2, max_factor=None):
        self._add(Knob(name, "split", (SplitEntity((-1,) + (1,) * (num_outputs - 1)),)))

    def define_knob(self, name, candidates, default=None):
        self._add(Knob(name, "knob", (KnobEntity(candidates[0] if default is None
                                                 else default),)))

    def define_reorder(self, name, axes, candidates):
        n = axes if isinstance(axes, int) else len(axes)
        self._add(Knob(name, "reorder", (ReorderEntity(tuple(range(n))),)))

    def values(self) -> Dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return "FallbackConfigEntity()"


__all__ = ["ConfigEntity", "ConfigSpace", "FallbackConfigEntity", "Knob", "KnobEntity",
           "ReorderEntity", "SpaceError", "SplitEntity"]
