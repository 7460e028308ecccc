"""Shared by the tuner's tests: a tiny model whose two dense kernels have tiny spaces."""
import pytest

from compiler.relax.testing import models


@pytest.fixture(scope="module")
def tiny_mlp():
    """dense (2x8 by 4x8) + bias + relu, dense (2x4 by 2x4) + bias, softmax: two matmul
    tasks of 4 points each."""
    return models.mlp(batch=2, features=8, hidden=4, classes=2)
