"""save_param_dict_to_file / load_param_dict_from_file round trip."""
import numpy as np

import microruntime as mr


def test_param_file_round_trip(tmp_path):
    params = {"x": np.random.randn(10), "w": np.arange(6, dtype="int8").reshape(2, 3)}
    path = tmp_path / "p.params"
    mr.save_param_dict_to_file(params, str(path))
    loaded = mr.load_param_dict_from_file(str(path))
    assert sorted(loaded) == ["w", "x"]
    for name, value in params.items():
        assert loaded[name].dtype == str(value.dtype)
        np.testing.assert_array_equal(loaded[name].numpy(), value)
