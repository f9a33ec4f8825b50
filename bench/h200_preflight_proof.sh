#!/usr/bin/env bash
# The gate's preflight on a real GPU box (issue 17's proof), in one go, transcripts under $OUT (default ./out):
#  1. a real process holds 100 GB of GPU memory (torch), a local model of 30 GB of weights (sparse files) is
#     gated with --mem-fraction-static 0.2 (refused, naming that pid: SGLang gives weights + KV cache
#     0.2 x the memory free before it loads, and 30 GB does not fit) and 0.9 (allowed, with a warning);
#  2. --tp 2 on one GPU (refused: 2 GPUs needed, 1 visible); CUDA_VISIBLE_DEVICES= (refused: 0 visible);
#  3. a venv (system site packages visible) with a small fake `sglang` dist whose METADATA declares real-shaped
#     Requires-Dist: allowed while pybase64 is there, refused naming pybase64 once it is removed; the gated
#     command runs the venv's python, so that is the environment the gate reads (issue 15's target choice);
#  4. bench/bench_gate.py --live: the gate with the preflight against the bare-NVML floor.
# Run from the repository root:  bash bench/h200_preflight_proof.sh      (about 2-4 minutes)
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${EXTRA_PATH:+:$EXTRA_PATH}
T=$(mktemp -d)
PY=${PY:-python3}
LOG=$OUT/proof.txt
: >"$LOG"
say() { printf '\n$ %s\n' "$*" | tee -a "$LOG"; }
run() {  # run a command, keep its output and exit status in the transcript
  say "$*"
  "$@" >>"$LOG" 2>&1
  echo "[exit $?]" | tee -a "$LOG"
}
{ echo "host: $(hostname)  $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv;
  $PY -c 'import sys, torch, pynvml; print(sys.version.split()[0], torch.__version__)';
  $PY -c 'import packaging, jsonschema, rich; print("packaging", packaging.__version__)' || echo "MISSING a stackcheck dependency"; } >>"$LOG" 2>&1
cat "$LOG"

# -- 1. memory held by another process --------------------------------------------------------------------
$PY -c 'import os, sys, time, torch
x = torch.empty(100 * 10**9, dtype=torch.uint8, device="cuda"); x.fill_(1); torch.cuda.synchronize()
print(os.getpid(), flush=True); time.sleep(900)' >"$T/holder.pid" 2>"$T/holder.err" &
HOLDER=$!
for _ in $(seq 120); do [ -s "$T/holder.pid" ] || ! kill -0 "$HOLDER" 2>/dev/null && break; sleep 1; done
cat "$T/holder.err" >>"$LOG"
echo "holder pid $HOLDER (printed: $(cat "$T/holder.pid"))" | tee -a "$LOG"
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >>"$LOG" 2>&1
M=$T/llama-70b
mkdir -p "$M"
echo '{"architectures": ["LlamaForCausalLM"], "hidden_size": 8192, "num_hidden_layers": 80, "torch_dtype": "bfloat16"}' >"$M/config.json"
for i in 1 2 3; do truncate -s 10G "$M/model-0000$i-of-00003.safetensors"; done
L=($PY -m sglang.launch_server --model-path "$M")
run $PY -m stackcheck gate --dry-run -- "${L[@]}" --mem-fraction-static 0.2
run $PY -m stackcheck gate --dry-run -- "${L[@]}" --mem-fraction-static 0.9
run $PY -m stackcheck gate --dry-run -- "${L[@]}"
$PY -m stackcheck gate --format json --dry-run -- "${L[@]}" --mem-fraction-static 0.2 >"$OUT/refusal-0.2.json" 2>&1
kill "$HOLDER"; wait "$HOLDER" 2>/dev/null

# -- 2. GPU count ------------------------------------------------------------------------------------------
run $PY -m stackcheck gate --dry-run -- "${L[@]}" --tp 2
run env CUDA_VISIBLE_DEVICES= $PY -m stackcheck gate --dry-run -- "${L[@]}"
$PY -m stackcheck gate --format json --dry-run -- "${L[@]}" --tp 2 >"$OUT/refusal-tp2.json" 2>&1

# -- 3. a dependency removed from a venv ---------------------------------------------------------------------
$PY -m venv --system-site-packages "$T/venv"
SITE=$("$T/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
D=$SITE/sglang-0.5.999.dist-info
mkdir -p "$D" "$SITE/pybase64-1.4.2.dist-info"
printf 'Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.999\nRequires-Dist: torch>=2.4\nRequires-Dist: filelock\nRequires-Dist: pybase64\nRequires-Dist: av; sys_platform == "linux" and platform_machine == "aarch64"\nRequires-Dist: diffusers==0.36.0; extra == "diffusion"\n' >"$D/METADATA"
printf 'Metadata-Version: 2.1\nName: pybase64\nVersion: 1.4.2\n' >"$SITE/pybase64-1.4.2.dist-info/METADATA"
VL=("$T/venv/bin/python" -m sglang.launch_server --model-path "$M" --mem-fraction-static 0.9)
V=($PY -m stackcheck gate --dry-run --allow-unknown -- "${VL[@]}")
run "${V[@]}"
rm -rf "$SITE/pybase64-1.4.2.dist-info"
run "${V[@]}"
$PY -m stackcheck gate --format json --dry-run --allow-unknown -- "${VL[@]}" >"$OUT/refusal-deps.json" 2>&1

# -- 4. speed ------------------------------------------------------------------------------------------------
run $PY bench/bench_gate.py -n 21 --live
rm -rf "$T"
echo "transcript: $LOG"
