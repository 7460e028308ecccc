"""plan_memory: storage for the values of a static graph, reused when lifetimes don't overlap.

before: a run order of steps (kernel calls), each reading some values and writing others, with
        every value's size in bytes known; the graph's inputs, weights and outputs named.
after:  a storage slot for every value: inputs and weights own their slots; a value written by
        a step takes a free slot (the smallest that fits, else the largest free one, grown to
        fit) or a new one; a slot is free again once every reader of the value it holds has
        run (outputs of the graph are never freed). A slot's size is that of its largest user.

This is the planner of the graph executor (TVM's storage_id / "list_int" attribute): the sum of
the slot sizes is what the executor allocates, and the compiler's manifest records it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence


@dataclass(frozen=True)
class Step:
    """A kernel call: the values (any hashable keys) it reads, then those it writes."""

    reads: Sequence
    writes: Sequence


@dataclass
class MemoryPlan:
    storage_id: Dict[object, int]     # value -> slot
    slot_bytes: List[int]             # slot -> bytes (its largest user)

    @property
    def total_bytes(self) -> int:
        return sum(self.slot_bytes)


def plan_memory(steps: Sequence[Step], sizes: Dict[object, int], pinned: Sequence,
                outputs: Sequence) -> MemoryPlan:
    """Slots for every value in `sizes`. `pinned` values (inputs, weights) get a slot each and
    are never shared; `outputs` are never freed."""
    pinned = set(pinned)
    storage: Dict[object, int] = {}
    slot_bytes: List[int] = []

    def new_slot(nbytes: int) -> int:
        slot_bytes.append(nbytes)
        return len(slot_bytes) - 1

    for v in pinned:
        if v not in storage:
            storage[v] = new_slot(sizes[v])
    readers: Dict[object, int] = {}
    for s in steps:
        for v in s.reads:
            readers[v] = readers.get(v, 0) + 1
    for v in outputs:
        readers[v] = readers.get(v, 0) + 1   # held to the end
    free: List[int] = []
    for s in steps:
        for v in s.writes:
            if v in storage:
                continue
            need = sizes[v]
            fits = [k for k in free if slot_bytes[k] >= need]
            if fits:
                k = min(fits, key=lambda k: slot_bytes[k])
            elif free:
                k = max(free, key=lambda k: slot_bytes[k])
                slot_bytes[k] = need
            else:
                k = new_slot(need)
            if k in free:
                free.remove(k)
            storage[v] = k
        for v in s.reads:
            readers[v] -= 1
            if readers[v] == 0 and v not in pinned:
                free.append(storage[v])
        for v in s.writes:   # written but never read: free right away
            if readers.get(v, 0) == 0 and storage[v] not in free:
                free.append(storage[v])
    return MemoryPlan(storage, slot_bytes)
