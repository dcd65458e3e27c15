#!/usr/bin/env bash
# The GPU session's routine, one step per device call, so that a lease of about 30
# minutes (10 per command) goes to measuring, not to setting up.
#
#   tools/gpu_session.sh wheels         here, before the first device call: downloads the
#                                       islpy wheel for the device's CPython 3.12 into .whl/
#                                       (git-ignored); every device call carries .whl
#   tools/gpu_session.sh tests          on the device: the `gpu` tests (-m gpu), log in $OUT
#   tools/gpu_session.sh bench [ARGS]   on the device: tools/bench.py ARGS, its markdown and
#                                       JSON in $OUT (split long runs with --cases)
#
# The device has no package index: islpy travels as a wheel, cinn_py is put on the path
# from the working tree, and everything else (numpy, cupy, cuda-bindings, NVRTC, torch,
# pytest) is the device image's own. $OUT is the folder the device tool brings back;
# outside a device call the step writes to ./gpu_out instead.
set -euo pipefail
cd "$(dirname "$0")/.."

step="${1:-}"
shift || true
out="${OUT:-gpu_out}"

device_setup() {
    if ! ls .whl/islpy-*.whl >/dev/null 2>&1; then
        echo "gpu_session: no .whl/islpy-*.whl: run 'tools/gpu_session.sh wheels' here and carry .whl" >&2
        exit 2
    fi
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
    mkdir -p "$out"
    {
        date -u +"%Y-%m-%dT%H:%M:%SZ"
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
            --format=csv,noheader || true
        python3 -c 'import cupy, numpy, sys; print("python", sys.version.split()[0], "numpy", numpy.__version__, "cupy", cupy.__version__)'
        python3 -c 'import torch; print("torch", torch.__version__)' || true
    } >"$out/device.txt" 2>&1
    cat "$out/device.txt"
}

case "$step" in
wheels)
    version="$(python3 -c 'import islpy; print(islpy.__version__)' 2>/dev/null || echo)"
    spec="islpy${version:+==$version}"
    mkdir -p .git/info
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$spec"
    ls -l .whl
    ;;
tests)
    device_setup
    set +e
    python3 -m pytest kernels_tests -m gpu -q -p no:cacheprovider "$@" 2>&1 | tee "$out/gpu_tests.txt" | tail -40
    status=${PIPESTATUS[0]}
    set -e
    echo "gpu_session: pytest exit $status (log: $out/gpu_tests.txt)"
    exit "$status"
    ;;
bench)
    device_setup
    tag="$(echo "$*" | tr -c 'A-Za-z0-9_,-' '_' | cut -c1-60)"
    python3 tools/bench.py --json "$out/bench${tag:+_$tag}.json" "$@" 2>&1 |
        tee "$out/bench${tag:+_$tag}.md"
    ;;
*)
    sed -n '2,16p' "$0" >&2
    exit 2
    ;;
esac
