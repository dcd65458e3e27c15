#!/usr/bin/env bash
# The GPU check: everything a session does with a GPU, in ONE device call that ends
# within 8 minutes (GPU time comes in leases of about 15 minutes, a 1-2 minute machine
# start included), so that a lease goes to measuring, not to setting up.
#
#   tools/gpu_check.sh wheels        HERE, before the device call: downloads the wheels
#                                    the device lacks (islpy, nvmath-python, the cuDNN
#                                    frontend, platformdirs, ...) for its CPython 3.12
#                                    into .whl/ (git-ignored), which the device call carries
#   tools/gpu_check.sh [STEP...]     on the device (the default: every step, in order):
#       run(command="tools/gpu_check.sh", carry=[".whl"], timeout_s=540)
#   tools/gpu_check.sh --list        the steps and their time limits
#
# Exit status: 0 every step ok, 1 a step failed or timed out, 3 only skips (no GPU).
#
# Steps (each under its own `timeout`; a failure, a timeout or a skip never stops the
# steps after it; logs in $OUT):
#   setup          the wheels of .whl/ (islpy, nvmath-python, the cuDNN frontend) into
#                  /tmp/site, each unless python3 already imports it
#   device         GPU name, driver, CUDA / NVRTC / cupy / torch / triton versions
#   tiny           examples/softmax.pir and examples/layer_norm_gelu.pir compiled, run
#                  and checked against the reference (`cinn-py run --check --profile`)
#   tests          pytest kernels_tests -m gpu -n 14 --timeout 120 --maxfail 30
#   bench          tools/bench.py --no-torch-compile --symbolic --fast-math: every case,
#                  markdown + JSON, each also timed on the device alone (a CUDA graph of
#                  many runs), and again with -1 rows (symbolic kernels, issue 18), with
#                  every dim -1 where it has no parameters, and with fast math, same run
#   e2e            tools/bench_e2e.py: the LLaMA decoder layer (float16, bfloat16) and the
#                  BERT-base layer (float16) end to end against PyTorch eager and
#                  torch.compile; its markdown goes to bench.md after the bench's, its
#                  JSON into bench.json as the key "e2e"
#   torch_compile  tools/bench.py with torch.compile on three cases only
#   tune           tools/tune.py --time 3 at [4096, 4096] on the row reductions (softmax,
#                  layer_norm, rms_norm), the column sum (its lanes rule at a shape it
#                  was not timed at) and add_relu_mul (the flat tactic's threads and
#                  steps, never timed well); float32 and float16: the static reports
#                  built by every CPU, the model's best 3 and the best of each kind of
#                  setting (a persistent grid, with and without prefetch) timed on the
#                  device alone, interleaved; its output goes to bench.md, the database
#                  it would write into bench.json as the key "tune" (schedules/ is
#                  updated here, by hand, from what it says)
#   ncu            Nsight Compute on four kernels (softmax f16, layer_norm f32,
#                  transpose f16, reduce_sum over all): SpeedOfLight, memory workload,
#                  launch statistics and occupancy, as CSV
#
# What comes back from $OUT (the device tool returns at most 8 files): summary.txt (each
# step's status, exit code, seconds taken and seconds it was given, then the device's name and versions, then
# the end of each failed step's log), tiny.txt, tests.txt, bench.md (bench, e2e, tune),
# bench.json (e2e's under "e2e", tune's under "tune"), torch_compile.md, ncu.csv, ncu.txt. Outside a device
# call $OUT defaults to ./gpu_out.
#
# Time: each step may run for its own limit (STEPS below) plus whatever the steps
# before it left unused, never into the time the steps after it are promised, and the
# whole run stops by TOTAL_LIMIT seconds. Without a GPU (or with GPU_CHECK_NO_GPU=1)
# the GPU steps are skipped at once and `tiny` runs on cuda-emu, labelled so.
#
# The device has no package index: islpy travels as a wheel, cinn_py is put on the path
# from the working tree, everything else (numpy, cupy, cuda-bindings, NVRTC, torch,
# triton, pytest-xdist, pytest-timeout, ncu) is the device image's own. Environment:
# OUT, PYTHON (default python3), CINN_PY_CACHE_DIR (default a folder under /tmp),
# GPU_CHECK_NO_GPU=1 (behave as on a machine without a GPU: the tests use it).
# shellcheck disable=SC2329 # the steps are functions called as `bash -c step_NAME`
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

# name:seconds, in order: each step's own time limit (kernels_tests/test_gpu_check.py checks
# the sum).
# Each step also gets a KILL_GRACE, so sum(seconds) + 8 * KILL_GRACE <= TOTAL_LIMIT.
STEPS=(setup:15 device:20 tiny:25 tests:70 bench:70 e2e:60 torch_compile:40 tune:100 ncu:40)
TOTAL_LIMIT=470 # 7 min 50 s; the device call's own timeout_s: 540
KILL_GRACE=3    # seconds between a step's TERM and its KILL

# The three torch.compile cases and the four ncu cases (tools/bench.py case names).
TORCH_COMPILE_CASES="softmax_f16_4096x4096,layer_norm_f32_4096x4096,reduce_sum_rows_f32_8192x8192"
# What the tune step tunes (tools/tune.py --cases / --shapes): the rows below 90% of copy,
# the column sum and the elementwise case: 6 keys (the rows' 2 alone took 21 s of the
# step's 100 on an H200, 2026-11-27; the 4 others are one kernel each).
TUNE_CASES="softmax,layer_norm,rms_norm,reduce_sum_cols,add_relu_mul"
TUNE_SHAPES="4096x4096"
NCU_CASES="softmax_f16_4096x4096 layer_norm_f32_4096x4096 transpose_f16_8192x8192 reduce_sum_all_f32_8192x8192"
NCU_KERNELS='regex:^fn_' # cinn_py names its kernels fn_<group>
NCU_SECTIONS="SpeedOfLight MemoryWorkloadAnalysis LaunchStats Occupancy"

usage() {
    sed -n '2,13p' "$0" >&2
    exit 2
}

# The wheels the device lacks, as pip specs: islpy (a core dependency), and the `gpu`
# extra's device-library bindings the table in cinn_py/targets/cuda_library calls:
# nvmath-python (cuBLASLt) with its cuda-core / cuda-pathfinder, and the cuDNN frontend
# (without its optional CUTLASS DSL, hundreds of MB: its DSL engines are not used). The
# CUDA libraries themselves (libcublasLt, libcudnn: hundreds of MB, past the 64 MiB a
# device call carries) come from the device image; without them those tests fail with
# the library's load error.
# platformdirs, filelock and tqdm are core dependencies the device image lacks (found on
# an H200, 2026-11-26: the default kernel-cache folder needs platformdirs).
GPU_WHEELS="nvmath-python cuda-core cuda-pathfinder nvidia-cudnn-frontend platformdirs filelock tqdm"

wheels() {
    local py="${PYTHON:-python3}" version spec
    version="$("$py" -c 'import islpy; print(islpy.__version__)' 2>/dev/null || echo)"
    spec="islpy${version:+==$version}"
    if [[ -d .git ]]; then
        mkdir -p .git/info
        grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude
    fi
    # shellcheck disable=SC2086 # GPU_WHEELS is a list of specs
    "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$spec" $GPU_WHEELS ||
        return
    ls -l .whl
    du -sh .whl
}

case "${1:-}" in
wheels)
    wheels
    exit
    ;;
--list)
    for s in "${STEPS[@]}"; do printf '%-14s %4s s\n' "${s%%:*}" "${s##*:}"; done
    echo "total limit    $TOTAL_LIMIT s"
    exit 0
    ;;
-h | --help) usage ;;
esac

# ---- the steps: each a function, run as `timeout LIMIT bash -c step_NAME` with its
# stdout and stderr in $OUT/<log>; exit 77 = skipped, the reason in $WORK/NAME.skip ----

skip() { # skip STEP REASON...
    local step="$1"
    shift
    echo "SKIPPED: $*" | tee "$WORK/$step.skip"
    exit 77
}

need_gpu() { # need_gpu STEP
    [[ "$HAVE_GPU" == 1 ]] || skip "$1" "no GPU ($GPU_REASON)"
}

step_setup() {
    echo "== setup: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    if "$PY" -c 'import islpy' 2>/dev/null; then
        echo "islpy imports already: $("$PY" -c 'import islpy; print(islpy.__version__, islpy.__file__)')"
    elif ! ls .whl/islpy-*.whl >/dev/null 2>&1; then
        echo "no islpy and no .whl/islpy-*.whl: run 'tools/gpu_check.sh wheels' here, then carry .whl" >&2
        exit 2
    fi
    local wheel name missing=() abi
    # the wheels are for the device's CPython 3.12: one built for another Python is left
    # out here (a developer's machine with .whl/ present), the pure-Python ones never
    abi="cp$("$PY" -c 'import sys; print("%d%d" % sys.version_info[:2])')"
    for wheel in .whl/*.whl; do
        [[ -e "$wheel" ]] || continue
        case "$(basename "$wheel")" in
        *-py3-none-any.whl | *-"$abi"-*) ;;
        *)
            echo "not for this Python ($abi): $wheel"
            continue
            ;;
        esac
        name="$(basename "$wheel")"
        name="${name%%-*}"
        case "$name" in # the import name of each wheel's distribution
        nvmath_python) name=nvmath ;;
        cuda_core) name=cuda.core ;;
        cuda_pathfinder) name=cuda.pathfinder ;;
        nvidia_cudnn_frontend) name=cudnn ;;
        esac
        "$PY" -c "import $name" 2>/dev/null || missing+=("$wheel")
    done
    if ((${#missing[@]})); then
        echo "installing ${missing[*]} into /tmp/site"
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/site "${missing[@]}" || exit
    fi
    "$PY" -c 'import islpy; print("islpy", islpy.__version__)' || exit
    "$PY" - <<'EOF' || true
import importlib
for module in ("nvmath", "nvmath.bindings.cublasLt", "cudnn"):
    try:
        loaded = importlib.import_module(module)
        print(module, getattr(loaded, "__version__", ""), "ok")
    except Exception as error:  # a missing wheel or CUDA library: the tests will say
        print(module, "NOT importable:", type(error).__name__, error)
EOF
    "$PY" -c 'import cinn_py; print("cinn_py", cinn_py.__version__, "from", cinn_py.__file__)'
}

step_device() {
    echo "== device: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -srm)"
    if [[ "$HAVE_GPU" == 1 ]]; then
        echo "GPU: yes ($GPU_REASON)"
    else
        echo "GPU: NONE ($GPU_REASON): the GPU steps are skipped, tiny runs on cuda-emu"
    fi
    if command -v nvidia-smi >/dev/null; then
        timeout 15 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,compute_cap \
            --format=csv
        timeout 15 nvidia-smi | grep -m1 'CUDA Version' || true
    else
        echo "nvidia-smi: not found"
    fi
    if command -v nvcc >/dev/null; then nvcc --version | tail -2; else echo "nvcc: not found"; fi
    if [[ -n "$NCU" ]]; then
        echo "ncu: $NCU, $("$NCU" --version 2>&1 | tail -1)"
    else
        echo "ncu: not found"
    fi
    "$PY" - <<'EOF'
import importlib, importlib.metadata as md, sys

print("python", sys.version.split()[0], sys.executable)
for dist in ("numpy", "islpy", "ml_dtypes", "cuda-bindings", "cuda-core", "nvidia-cuda-nvrtc",
             "cupy-cuda13x", "torch", "triton", "pytest", "pytest-xdist", "pytest-timeout"):
    try:
        print(f"  {dist} {md.version(dist)}")
    except md.PackageNotFoundError:
        print(f"  {dist}: not installed")

def line(what, fn):
    try:
        print(f"{what}: {fn()}")
    except Exception as error:  # a report, never a failure of its own
        print(f"{what}: n/a ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})")

def nvrtc():
    from cinn_py.backends import nvrtc
    archs = nvrtc.supported_archs()
    return f"{nvrtc.nvrtc_version()} (archs {archs[0]}..{archs[-1]})"

def cupy_info():
    import cupy
    rt = cupy.cuda.runtime
    name = rt.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    v, d = rt.runtimeGetVersion(), rt.driverGetVersion()
    return (f"cupy {cupy.__version__}, CUDA runtime {v // 1000}.{v % 1000 // 10}, "
            f"driver API {d // 1000}.{d % 1000 // 10}, device {name}")

def torch_info():
    import torch
    text = f"torch {torch.__version__} (CUDA {torch.version.cuda})"
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        text += f", {p.name}, {p.multi_processor_count} SMs, {p.total_memory / 2**30:.0f} GiB"
    else:
        text += ", no CUDA device"
    return text

def cinn_target():
    from cinn_py.targets.device import gpu_available, no_gpu_reason
    return "cuda target available" if gpu_available() else f"no cuda target: {no_gpu_reason()}"

line("NVRTC", nvrtc)
line("CuPy", cupy_info)
line("PyTorch", torch_info)
line("cinn_py", cinn_target)
EOF
}

step_tiny() {
    local target=cuda status=0 program
    if [[ "$HAVE_GPU" != 1 ]]; then
        target=cuda-emu
        echo "NO GPU ($GPU_REASON): running on cuda-emu, the CPU emulator (a fallback, not a GPU result)"
    fi
    for program in examples/softmax.pir examples/layer_norm_gelu.pir; do
        echo "== $PY -m cinn_py.cli run $program --target $target --check --profile -v"
        "$PY" -m cinn_py.cli run "$program" --target "$target" --check --profile -v || status=$?
    done
    return "$status"
}

step_tests() {
    need_gpu tests
    local args=(-m gpu --maxfail 30 -p no:cacheprovider -q)
    if "$PY" -c 'import xdist' 2>/dev/null; then args+=(-n 14); else echo "no pytest-xdist: one process"; fi
    if "$PY" -c 'import pytest_timeout' 2>/dev/null; then
        args+=(--timeout 120)
    else
        echo "no pytest-timeout: no per-test timeout"
    fi
    echo "== $PY -m pytest kernels_tests ${args[*]}"
    "$PY" -m pytest kernels_tests "${args[@]}"
}

step_bench() {
    need_gpu bench
    # The markdown (stdout) is the log; the per-case progress (stderr) is appended to it.
    "$PY" tools/bench.py --no-torch-compile --symbolic --fast-math --json "$OUT/bench.json" \
        2>"$WORK/bench.err"
}

time_before_merge() { # seconds a step's tool may run and still be merged into bench.json
    # (it ends, KILL included, before the step's own timeout)
    echo $((STEP_DEADLINE - 8 - $(date +%s)))
}

merge_into_bench_json() { # merge_into_bench_json KEY SOURCE LIST: SOURCE's JSON into bench.json as KEY
    "$PY" - "$1" "$2" "$OUT/bench.json" "$3" <<'EOF'
import json, os, sys

key, source, merged, listed = sys.argv[1:]
if not os.path.exists(source):
    sys.exit(f"{key}: no JSON written")
data = {}
try:
    with open(merged, encoding="utf-8") as f:
        data = json.load(f)
except (OSError, ValueError) as error:  # no bench.json, or one cut short: this step's alone
    data = {"bench_json": f"unreadable ({error})"} if os.path.exists(merged) else {}
with open(source, encoding="utf-8") as f:
    data[key] = json.load(f)
with open(merged + ".tmp", "w", encoding="utf-8") as f:
    json.dump(data, f, indent=2)
os.replace(merged + ".tmp", merged)
print(f"{key}: {len(data[key][listed])} {listed} merged into bench.json as '{key}'")
EOF
}

step_e2e() {
    need_gpu e2e
    local left status=0
    left=$(time_before_merge)
    echo
    echo "## e2e: tools/bench_e2e.py --warmup 3 --iters 20 --profile 12 (limit ${left} s)"
    timeout -k 3 "$left" "$PY" tools/bench_e2e.py --warmup 3 --iters 20 --profile 12 \
        --json "$WORK/e2e.json" 2>"$WORK/e2e.err" || status=$?
    # exe.run's host profile per case (where `cinn_py ms` exceeds `runtime ms`)
    awk '/^---- host profile/ { p = 1 } p && !/^\[/' "$WORK/e2e.err"
    merge_into_bench_json e2e "$WORK/e2e.json" results || status=1
    return "$status"
}

step_torch_compile() {
    need_gpu torch_compile
    "$PY" -c 'import torch, triton' || skip torch_compile "torch or triton cannot be imported"
    # One compile thread: three small graphs compile faster than a worker pool starts.
    TORCHINDUCTOR_COMPILE_THREADS=1 "$PY" tools/bench.py --cases "$TORCH_COMPILE_CASES" \
        --budget 0.5 --json "$WORK/torch_compile.json" 2>"$WORK/torch_compile.err"
}

step_tune() {
    need_gpu tune
    local left status=0
    left=$(time_before_merge)
    echo
    echo "## tune: tools/tune.py --cases $TUNE_CASES --shapes $TUNE_SHAPES --time 3 (limit ${left} s)"
    timeout -k 3 "$left" "$PY" tools/tune.py --cases "$TUNE_CASES" --shapes "$TUNE_SHAPES" \
        --time 3 --out "$WORK/tune.json" || status=$?
    merge_into_bench_json tune "$WORK/tune.json" entries || status=1
    return "$status"
}

step_ncu() {
    [[ -n "$NCU" ]] || skip ncu "ncu not found (not on PATH, nor in /opt/nvidia/nsight-compute or /usr/local/cuda/bin)"
    need_gpu ncu
    cat >"$WORK/ncu_case.py" <<'EOF'
"""Run one tools/bench.py case once on the GPU: compile (kernel cache), feed, launch."""
import os, sys

sys.path.insert(0, os.path.join(os.getcwd(), "tools"))
import cupy as cp

import bench

case = bench.select_cases([sys.argv[1]])[0]
arrays = bench.make_inputs(case, cp)
feeds, params = bench._split(case, arrays)
exe = bench.compile_case(case, "cuda")
print(f"ncu_case {case.name}: {bench.describe_groups(exe)}", file=sys.stderr)
bench.CudaBackend(cp).run_compiled(exe, feeds, params)
cp.cuda.Device().synchronize()
EOF
    local sections=() cases=() s case csv left limit cases_left status=0 rows first
    for s in $NCU_SECTIONS; do sections+=(--section "$s"); done
    read -ra cases <<<"$NCU_CASES"
    cases_left=${#cases[@]}
    : >"$OUT/ncu.csv"
    for case in "${cases[@]}"; do
        # Ends (KILL included) before the step's own timeout, which would not reach it:
        # a nested `timeout` runs in a process group of its own.
        left=$((STEP_DEADLINE - 4 - $(date +%s)))
        limit=$((left / cases_left))
        cases_left=$((cases_left - 1))
        if ((limit < 5)); then
            echo "== $case: SKIPPED, out of time"
            status=1
            continue
        fi
        csv="$WORK/ncu_$case.out"
        echo "== $case (limit ${limit} s): ncu --kernel-name $NCU_KERNELS --launch-count 4 ${sections[*]} --csv --page details"
        timeout -k 3 "$limit" "$NCU" --target-processes all --kernel-name "$NCU_KERNELS" --launch-count 4 \
            "${sections[@]}" --csv --page details "$PY" "$WORK/ncu_case.py" "$case" >"$csv" 2>&1
        s=$?
        grep -v '^"' "$csv"         # ncu's own lines and the driver's, to ncu.txt
        rows=$(grep -c '^"' "$csv") # the CSV rows (quoted), header included
        echo "== $case: exit $s, $((rows > 0 ? rows - 1 : 0)) metric rows"
        if ((s != 0 || rows < 2)); then status=1; fi
        # One CSV: a "Case" column in front, the header once.
        first=1
        [[ -s "$OUT/ncu.csv" ]] && first=0
        grep '^"' "$csv" | awk -v c="$case" -v first="$first" \
            'NR == 1 { if (first == 1) print "\"Case\"," $0; next } { print "\"" c "\"," $0 }' \
            >>"$OUT/ncu.csv"
    done
    return "$status"
}

export -f skip need_gpu time_before_merge merge_into_bench_json step_setup step_device step_tiny step_tests step_bench step_e2e step_torch_compile \
    step_tune step_ncu

# ---- the runner ---------------------------------------------------------------------

OUT="${OUT:-gpu_out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
WORK="$(mktemp -d /tmp/gpu_check.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
PY="${PYTHON:-python3}"
export OUT WORK PY PYTHONUNBUFFERED=1
export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export CINN_PY_CACHE_DIR="${CINN_PY_CACHE_DIR:-/tmp/gpu_check_kernel_cache}"
export TORCH_COMPILE_CASES TUNE_CASES TUNE_SHAPES NCU_CASES NCU_KERNELS NCU_SECTIONS

NCU="$(command -v ncu 2>/dev/null || true)"
for f in /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu; do
    [[ -z "$NCU" && -x "$f" ]] && NCU="$f"
done
HAVE_GPU=0
if [[ "${GPU_CHECK_NO_GPU:-0}" == 1 ]]; then
    GPU_REASON="GPU_CHECK_NO_GPU=1"
elif ! command -v nvidia-smi >/dev/null; then
    GPU_REASON="nvidia-smi not found"
elif gpus="$(timeout 15 nvidia-smi -L 2>&1)" && grep -q '^GPU ' <<<"$gpus"; then
    HAVE_GPU=1
    GPU_REASON="$(head -1 <<<"$gpus")"
else
    GPU_REASON="nvidia-smi -L: $(head -1 <<<"${gpus:-no output}")"
fi
export NCU HAVE_GPU GPU_REASON

# The steps asked for (setup always runs first), checked against STEPS.
declare -A LIMIT=()
ORDER=()
for s in "${STEPS[@]}"; do
    LIMIT[${s%%:*}]=${s##*:}
    ORDER+=("${s%%:*}")
done
if (($#)); then
    for a in "$@"; do [[ -n "${LIMIT[$a]:-}" ]] || {
        echo "gpu_check: no step '$a' (steps: ${ORDER[*]})" >&2
        exit 2
    }; done
    chosen=(setup)
    for s in "${ORDER[@]}"; do
        [[ "$s" == setup ]] && continue
        for a in "$@"; do [[ "$a" == "$s" ]] && chosen+=("$s"); done
    done
else
    chosen=("${ORDER[@]}")
fi

declare -A OFFSET=()
# The logs a step of this run has begun: setup and device share one, bench, e2e and
# tune another (the device tool brings back 8 files at most).
declare -A STARTED=()
declare -A LOG=([setup]=device.txt [device]=device.txt [tiny]=tiny.txt [tests]=tests.txt
    [bench]=bench.md [e2e]=bench.md [torch_compile]=torch_compile.md [tune]=bench.md
    [ncu]=ncu.txt)
# Last run's files go (a device call's $OUT starts empty; ./gpu_out may not).
rm -f "$OUT"/{summary.txt,device.txt,tiny.txt,tests.txt,bench.md,bench.json,torch_compile.md,ncu.csv,ncu.txt}
START=$(date +%s)
DEADLINE=$((START + TOTAL_LIMIT))
TABLE="$WORK/table.txt"
printf '%-14s %-8s %5s %8s %7s  %s\n' step status exit seconds limit log >"$TABLE"
FAILED=0
SKIPPED=0
echo "gpu_check: steps ${chosen[*]}; GPU: $([[ $HAVE_GPU == 1 ]] && echo "$GPU_REASON" || echo "none ($GPU_REASON)"); logs in $OUT"

for i in "${!chosen[@]}"; do
    step="${chosen[$i]}"
    log="$OUT/${LOG[$step]}"
    # Promised to the steps after this one: their own limits (and their kill graces).
    later=0
    for s in "${chosen[@]:i+1}"; do later=$((later + LIMIT[$s] + KILL_GRACE)); done
    now=$(date +%s)
    # Its own limit plus what the steps before it left unused: all the time that is not
    # promised to the steps after it.
    limit=$((DEADLINE - now - later - KILL_GRACE))
    if ((limit < 1)); then
        status=SKIPPED rc=- took=0 limit=0
        echo "SKIPPED: out of time" >"$WORK/$step.skip"
    else
        export STEP_DEADLINE=$((now + limit))
        [[ -n "${STARTED[$log]:-}" ]] || : >"$log"
        STARTED[$log]=1
        OFFSET[$step]=$(stat -c %s "$log" 2>/dev/null || echo 0) # where this step's part begins
        t0=$(date +%s)
        timeout -k "$KILL_GRACE" "$limit" bash -c "step_$step" >>"$log" 2>&1
        rc=$?
        took=$(($(date +%s) - t0))
        if [[ -s "$WORK/$step.err" ]]; then
            { echo; echo "---- stderr ----"; cat "$WORK/$step.err"; } >>"$log"
        fi
        case $rc in
        0) status=ok ;;
        77) status=SKIPPED ;;
        124 | 137) status=TIMEOUT ;;
        *) status=FAILED ;;
        esac
    fi
    case $status in
    SKIPPED) SKIPPED=$((SKIPPED + 1)) ;;
    ok) ;;
    *) FAILED=$((FAILED + 1)) ;;
    esac
    note="${LOG[$step]}"
    [[ -f "$WORK/$step.skip" ]] && note="$note: $(tail -1 "$WORK/$step.skip")"
    printf '%-14s %-8s %5s %8s %7s  %s\n' "$step" "$status" "$rc" "$took" "$limit" "$note" | tee -a "$TABLE"
    cp "$TABLE" "$OUT/summary.txt" # kept up to date: a run cut short still says how far it got
done

# ---- summary.txt: the table, the device (device.txt folded in), the failures' tails ----
{
    echo "gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ): $(($(date +%s) - START)) s of $TOTAL_LIMIT s;" \
        "$FAILED failed or timed out, $SKIPPED skipped"
    echo "GPU: $([[ $HAVE_GPU == 1 ]] && echo "$GPU_REASON" || echo "NONE ($GPU_REASON)")"
    echo
    cat "$TABLE"
    if [[ -f "$OUT/device.txt" ]]; then
        echo
        cat "$OUT/device.txt"
    fi
    while read -r step status _; do
        [[ "$status" == FAILED || "$status" == TIMEOUT ]] || continue
        echo
        echo "---- $step: $status; the end of ${LOG[$step]} ----"
        tail -c +"$((${OFFSET[$step]:-0} + 1))" "$OUT/${LOG[$step]}" | tail -25
    done < <(tail -n +2 "$TABLE")
} >"$OUT/summary.txt"
rm -f "$OUT/device.txt" # folded into summary.txt: the device tool brings back 8 files at most
cat "$OUT/summary.txt"
if ((FAILED)); then exit 1; elif ((SKIPPED)); then exit 3; fi
exit 0
