"""CRC-32C (Castagnoli; reflected polynomial 0x82F63B78, initial value and final xor
0xFFFFFFFF), the checksum the runtime verifies at load (microruntime/src/crc32c.c):
`crc32c(data, value=0)` chains like `zlib.crc32`; `crc32c(b"123456789") == 0xE3069283`.

A model's params are tens of MB, so large inputs are cut into equal lanes whose CRCs numpy
computes side by side (four bytes per step over slicing tables), then joined: the CRC
register is linear over GF(2), so a lane's effect on the result is its register carried
through the zero bytes after it.
"""
from __future__ import annotations

import numpy as np

_POLY = 0x82F63B78
_LANES = 32768
_SMALL = 1 << 16  # below this, one byte at a time in Python


def _byte_table() -> np.ndarray:
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(_POLY), t >> 1).astype(np.uint32)
    return t


_T0 = _byte_table()
# _SLICE[k][b]: the register after byte b followed by k zero bytes.
_SLICE = [_T0]
for _ in range(3):
    _SLICE.append((_SLICE[-1] >> 8) ^ _T0[_SLICE[-1] & 0xFF])
_TABLE = [int(v) for v in _T0]


def _step_words(reg: np.ndarray, word) -> np.ndarray:
    """The registers after four more bytes (`word`, little-endian) each."""
    reg = reg ^ word
    return (_SLICE[3][reg & 0xFF] ^ _SLICE[2][(reg >> 8) & 0xFF]
            ^ _SLICE[1][(reg >> 16) & 0xFF] ^ _SLICE[0][reg >> 24])


def _raw_small(reg: int, data) -> int:
    for b in bytes(data):
        reg = (reg >> 8) ^ _TABLE[(reg ^ b) & 0xFF]
    return reg


def _zeros_operator(nbytes: int):
    """Four 256-entry tables whose lookups give the register after `nbytes` zero bytes
    (nbytes a multiple of 4) from any register: one per byte of the register."""
    basis = np.uint32(1) << np.arange(32, dtype=np.uint32)
    for _ in range(nbytes // 4):
        basis = _step_words(basis, np.uint32(0))
    tables = []
    for j in range(4):
        t = np.zeros(256, dtype=np.uint32)
        for bit in range(8):
            t[1 << bit:2 << bit] = t[:1 << bit] ^ basis[8 * j + bit]
        tables.append([int(v) for v in t])
    return tables


def _raw_large(reg: int, data) -> int:
    """The register after `data` (at least 4 bytes) from register `reg`."""
    view = np.frombuffer(data, dtype=np.uint8)
    lane = -(-view.size // (4 * _LANES)) * 4
    # Leading zero bytes leave a zero register unchanged, and a starting register equals
    # a zero one with its bytes xor-ed into the first four bytes of the data.
    padded = np.zeros(lane * _LANES, dtype=np.uint8)
    start = padded.size - view.size
    padded[start:] = view
    padded[start:start + 4] ^= np.frombuffer(int(reg).to_bytes(4, "little"), np.uint8)
    words = np.ascontiguousarray(padded.view("<u4").reshape(_LANES, lane // 4).T)
    regs = np.zeros(_LANES, dtype=np.uint32)
    for column in words:
        regs = _step_words(regs, column)
    z0, z1, z2, z3 = _zeros_operator(lane)
    out = 0
    for r in regs.tolist():
        out = (z0[out & 0xFF] ^ z1[(out >> 8) & 0xFF] ^ z2[(out >> 16) & 0xFF]
               ^ z3[out >> 24]) ^ r
    return out


def crc32c(data, value: int = 0) -> int:
    """The CRC-32C of `data` (bytes-like), continuing from the CRC `value` of earlier data."""
    data = memoryview(data).cast("B")
    reg = ~value & 0xFFFFFFFF
    reg = _raw_small(reg, data) if data.nbytes < _SMALL else _raw_large(reg, data)
    return ~reg & 0xFFFFFFFF
