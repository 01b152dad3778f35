#!/usr/bin/env bash
# GPU device check for the kernel-class benchmarks (issue 22), for a lent GPU machine.
#
# Runs the GPU-marked bench tests, then `gpu-advisor bench --profile quick` (its wall time
# measured as a user sees it), and copies the report and logs into $OUT:
#   $OUT/gpu-tests.log, $OUT/bench-quick.json, $OUT/bench-quick.log, $OUT/nvidia-smi.txt
# Usage (from the repository root): OUT=/some/dir PYTHON=python3 benchmarks/device_check.sh
set -u
OUT="${OUT:-./device-check-out}"
PY="${PYTHON:-python}"
mkdir -p "$OUT"
status=0

{ nvidia-smi || true; "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no cuda')"; } \
  > "$OUT/nvidia-smi.txt" 2>&1

echo "== GPU tests"
timeout 240 "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/bench/test_bench_gpu.py tests/bench/test_bench_kernels.py \
  > "$OUT/gpu-tests.log" 2>&1 || status=1
tail -5 "$OUT/gpu-tests.log"

echo "== gpu-advisor bench --profile quick"
start=$(date +%s%N)
timeout 240 "$PY" -m app.cli bench --profile quick --output "$OUT/bench-quick.json" \
  > "$OUT/bench-quick.log" 2>&1 || status=1
end=$(date +%s%N)
wall=$(( (end - start) / 1000000 ))
echo "quick profile wall time: ${wall} ms (goal 30 s, imports included)" | tee -a "$OUT/bench-quick.log"
tail -40 "$OUT/bench-quick.log"
date -u +"%Y-%m-%dT%H:%M:%SZ" > "$OUT/date.txt"
exit $status
