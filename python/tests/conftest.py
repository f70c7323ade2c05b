import os

import numpy as np
import pytest

import multires


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")


def pytest_collection_modifyitems(config, items):
    """GPU tests skip with a notice where there is no GPU; under
    MULTIRES_REQUIRE_GPU=1 the run fails instead (a device run must not
    pass by skipping)."""
    if multires.cuda_available():
        return
    why = multires._multires.cuda_unavailable_reason() or "no CUDA device"
    if os.environ.get("MULTIRES_REQUIRE_GPU") == "1" and any("gpu" in i.keywords for i in items):
        raise pytest.UsageError(f"MULTIRES_REQUIRE_GPU=1 but the CUDA backend cannot be used: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=f"no usable GPU ({why})"))


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)
