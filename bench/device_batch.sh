#!/bin/sh
# Every GPU-box proof that fits one device command (under 10 minutes), in order of what a session most needs:
#   1. bench/h200_perf.py: issue 21's ratios to the bare-NVML floor (audit, gate, audit --deep), --budget-s $PERF_S;
#   2. bench/h200_symm_link_proof.py: the jit probe's prediction for --enable-symm-mem's load_inline build
#      against a real build of that shape;
#   3. bench/h200_issue20_proof.sh: explain / audit at 80 columns / diff / schemas on the real box;
#   4. bench/h200_kernel_symbols.py: the kernel-symbol reader over the real torch's libraries;
#   5. bench/h200_target_proof.py: `--python` against the in-env audit of the system torch;
#   6. the tests marked nvcc (they compile CUDA test binaries; CI has no nvcc and skips them).
# From the repository root, on the device (wheels of stackcheck's dependencies the box lacks in .whl/):
#   sh bench/device_batch.sh            # PERF_S (default 200) bounds step 1; logs and JSON under $OUT
set -u
OUT=${OUT:-/tmp/device-batch}
mkdir -p "$OUT"
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="$PWD:/tmp/site"
else
    export PYTHONPATH="$PWD"
fi
export PYTHONUNBUFFERED=1
step() { printf '\n===== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }
step "machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)'
git log -1 --format='tree at %h %s' 2>/dev/null | cut -c1-120
step "1. h200_perf"
timeout $((${PERF_S:-200} + 60)) python3 bench/h200_perf.py --runs "${RUNS:-21}" --breakdown --budget-s "${PERF_S:-200}" \
    --json "$OUT/h200_perf.json"
echo "rc=$?"
step "2. symm link proof"
timeout 150 python3 bench/h200_symm_link_proof.py --out "$OUT/symm"
echo "rc=$?"
step "3. issue 20 proof"
timeout 60 sh bench/h200_issue20_proof.sh
echo "rc=$?"
step "4. kernel symbols"
timeout 60 python3 bench/h200_kernel_symbols.py "$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')" --runs 5
echo "rc=$?"
step "5. target proof"
timeout 120 python3 bench/h200_target_proof.py --out /tmp/target-proof --python "$(command -v python3)"
echo "rc=$?"
step "6. nvcc tests"
timeout 90 python3 -m pytest -q -p no:cacheprovider -m nvcc tests/readers/test_elf_fatbin.py 2>&1 | tail -5
step "done"
