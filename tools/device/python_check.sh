#!/bin/bash
# Usage on the device: bash tools/device/python_check.sh
# Installs the wheels carried in .whl (the multires wheel and the peers
# the image lacks: pywavelets, ssqueezepy) into /tmp/site, runs the Python
# package's tests with MULTIRES_REQUIRE_GPU=1 (a skip fails), then the
# Python GPU benchmark (tools/peers/python_gpu_peers.py).
set -u
repo=$(pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
rc=0
(cd /tmp && MULTIRES_REQUIRE_GPU=1 python3 -m pytest -q -p no:cacheprovider "$repo/python/tests" -W ignore::UserWarning) || rc=1
python3 "$repo/tools/peers/python_gpu_peers.py" || rc=1
exit $rc
