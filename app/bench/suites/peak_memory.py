"""Peak memory of one training step of the transformer block at two batch sizes, fitted as
mem(B) = fixed + B·per_sample.

What is counted (the whole step: weights, gradients, AdamW state, activations,
workspaces), per backend:

* CUDA/ROCm/XPU — in process: ``reset_peak_memory_stats()`` after a warm step, then one
  step, ``max_memory_allocated()`` minus the allocation before the model was built;
  ``max_memory_reserved()`` is recorded too.
* MPS — no peak API: ``current_allocated_memory()`` sampled after forward, backward and the
  optimizer step; the maximum minus the baseline (misses transient peaks inside ops).
* CPU — **one fresh subprocess per batch size** (a process's high-water mark never goes
  down and the allocator keeps freed pages, so in-process numbers would be polluted by
  earlier suites). The child imports torch, runs a tiny op, records its RSS as the
  baseline, resets the kernel's high-water mark (Linux ``/proc/self/clear_refs`` = 5), runs
  two training steps and reports VmHWM − baseline. Without clear_refs it falls back to
  ``ru_maxrss`` − baseline (KiB on Linux, bytes on macOS), and on Windows to psutil's peak
  working set.

The CPU child runs as ``python -m app.bench.suites.peak_memory --child '<json>'``.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from app.bench.device import empty_cache, is_oom
from app.bench.report import PeakMemoryPoint, PeakMemorySuite
from app.bench.suites.batch_scaling import ForeachAdamW, build_model, make_input, make_step
from app.bench.suites.common import CnnConfig, Context, TransformerConfig

WORKLOAD = "transformer_block"
CHILD_TIMEOUT_S = 300
#: The least the CPU children get under a time budget, seconds: importing torch in a fresh
#: process takes about a second on an idle machine; shorter and they would never finish.
MIN_CHILD_WAIT_S = 3.0


# ---------------------------------------------------------------------------------------
# CPU child process
# ---------------------------------------------------------------------------------------


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _current_rss() -> int:
    kib = _status_kib("VmRSS")
    if kib is not None:
        return kib * 1024
    import psutil

    return int(psutil.Process().memory_info().rss)


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return _status_kib("VmHWM") is not None
    except OSError:
        return False


def _peak_rss(hwm_reset: bool) -> tuple[int, str]:
    if hwm_reset:
        kib = _status_kib("VmHWM")
        if kib is not None:
            return kib * 1024, "linux VmHWM after /proc/self/clear_refs reset"
    try:
        import resource

        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        scale = 1 if sys.platform == "darwin" else 1024
        return int(maxrss) * scale, "ru_maxrss"
    except ImportError:
        import psutil

        info = psutil.Process().memory_info()
        return int(getattr(info, "peak_wset", info.rss)), "psutil peak working set"


def child_main(spec: dict[str, Any]) -> dict[str, Any]:
    torch.set_num_threads(int(spec.get("threads", 1)))
    cnn = CnnConfig(**spec["cnn"])
    tr = TransformerConfig(**spec["transformer"])
    batch = int(spec["batch"])
    # initialise lazy state (thread pool, allocator, oneDNN) before the baseline
    w = torch.randn(64, 64)
    (w @ w).sum().item()
    del w
    gc.collect()
    baseline = _current_rss()
    hwm_reset = _reset_hwm()
    torch.manual_seed(0)
    model = build_model(spec.get("workload", WORKLOAD), cnn, tr)
    model.train()
    opt = ForeachAdamW(model.parameters())
    x = make_input(spec.get("workload", WORKLOAD), batch, cnn, tr, torch.device("cpu"))
    step = make_step(model, x, "train", "fp32", opt)
    for _ in range(2):
        step()
    peak, method = _peak_rss(hwm_reset)
    return {
        "batch": batch,
        "peak_bytes": max(0, peak - baseline),
        "baseline_bytes": baseline,
        "method": method,
    }


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[3])


def _spawn(spec: dict[str, Any]) -> subprocess.Popen[str]:
    env = dict(os.environ)
    root = _package_root()
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["OMP_NUM_THREADS"] = str(spec.get("threads", 1))
    return subprocess.Popen(
        [sys.executable, "-m", "app.bench.suites.peak_memory", "--child", json.dumps(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=root,
    )


def _child_wait_s(ctx: Context) -> float:
    """How long the CPU children may run: the suite's share of the profile's time budget
    (``ctx.deadline``), never less than ``MIN_CHILD_WAIT_S`` (each child imports torch, about
    a second on an idle laptop) nor more than ``CHILD_TIMEOUT_S``."""
    if ctx.deadline is None:
        return CHILD_TIMEOUT_S
    left = ctx.deadline - time.perf_counter()
    return float(min(CHILD_TIMEOUT_S, max(MIN_CHILD_WAIT_S, left)))


def _cpu_points(ctx: Context, batches: tuple[int, ...]) -> tuple[list[PeakMemoryPoint], str]:
    prof = ctx.profile
    base = {
        "workload": WORKLOAD,
        "threads": 1,
        "cnn": asdict(prof.cnn),
        "transformer": asdict(prof.transformer),
    }
    wait_s = _child_wait_s(ctx)
    end = time.perf_counter() + wait_s
    # the children are independent processes: run them side by side (1 thread each)
    procs = [(b, _spawn({**base, "batch": b})) for b in batches]
    points: list[PeakMemoryPoint] = []
    method = ""
    errors: list[str] = []
    late: list[int] = []
    for b, proc in procs:
        try:
            out, err = proc.communicate(timeout=max(0.0, end - time.perf_counter()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            late.append(b)
            continue
        if proc.returncode != 0:
            errors.append(f"batch {b}: child exited {proc.returncode}: {err.strip()[-300:]}")
            continue
        try:
            data = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            errors.append(f"batch {b}: unreadable child output")
            continue
        points.append(PeakMemoryPoint(batch=b, peak_bytes=int(data["peak_bytes"])))
        method = data.get("method", "")
    if late:
        what = ", ".join(str(b) for b in late)
        if ctx.deadline is not None and wait_s < CHILD_TIMEOUT_S:
            ran = f"its child process ran past {wait_s:.0f} s"
            ctx.skip_note(f"peak memory at batch {what} ({ran})")
        else:
            errors.append(f"batch {what}: child timed out after {wait_s:.0f} s")
    if errors:
        ctx.warnings.extend(f"peak memory {e}" for e in errors)
    return points, (
        f"fresh subprocess per batch size (1 thread), {method} minus the RSS "
        "before the model was built"
        if method
        else "subprocess"
    )


# ---------------------------------------------------------------------------------------
# accelerators
# ---------------------------------------------------------------------------------------


def _accel_point(ctx: Context, batch: int) -> PeakMemoryPoint:
    prof = ctx.profile
    dev = ctx.torch_device
    backend = ctx.backend
    gc.collect()
    empty_cache(ctx.device)
    ctx.sync()
    mod: Any = torch.cuda if backend in ("cuda", "rocm") else getattr(torch, backend, None)
    if backend == "mps":
        baseline = int(torch.mps.current_allocated_memory())
    else:
        baseline = int(mod.memory_allocated(dev))
    model = build_model(WORKLOAD, prof.cnn, prof.transformer).to(dev)
    model.train()
    opt = ForeachAdamW(model.parameters())
    x = make_input(WORKLOAD, batch, prof.cnn, prof.transformer, dev)
    try:
        step = make_step(model, x, "train", "fp32", opt)
        step()  # warm step: creates the optimizer state
        ctx.sync()
        if backend == "mps":
            peak = int(torch.mps.current_allocated_memory())
            out = model(x)
            peak = max(peak, int(torch.mps.current_allocated_memory()))
            loss = out.float().pow(2).mean()
            loss.backward()
            torch.mps.synchronize()
            peak = max(peak, int(torch.mps.current_allocated_memory()))
            opt.step()
            torch.mps.synchronize()
            peak = max(peak, int(torch.mps.current_allocated_memory()))
            opt.zero_grad(set_to_none=True)
            return PeakMemoryPoint(batch=batch, peak_bytes=max(0, peak - baseline))
        mod.reset_peak_memory_stats(dev)
        step()
        ctx.sync()
        peak = int(mod.max_memory_allocated(dev))
        reserved = int(mod.max_memory_reserved(dev))
        return PeakMemoryPoint(
            batch=batch, peak_bytes=max(0, peak - baseline), reserved_bytes=reserved
        )
    finally:
        del model, opt, x
        gc.collect()
        empty_cache(ctx.device)


def _accel_points(ctx: Context, batches: tuple[int, ...]) -> tuple[list[PeakMemoryPoint], str]:
    points = []
    for b in batches:
        try:
            points.append(_accel_point(ctx, b))
        except Exception as exc:
            if is_oom(exc):
                empty_cache(ctx.device)
            ctx.warnings.append(f"peak memory at batch {b} failed: {exc}"[:300])
    if ctx.backend == "mps":
        method = (
            "torch.mps.current_allocated_memory sampled after forward, backward and "
            "optimizer step (max), minus the allocation before the model was built"
        )
    else:
        method = (
            "max_memory_allocated after reset_peak_memory_stats and one warm step, "
            "minus the allocation before the model was built"
        )
    return points, method


def run(ctx: Context) -> PeakMemorySuite:
    start = time.perf_counter()
    batches = tuple(sorted(set(ctx.profile.peak_memory_batches)))
    ctx.step("peak memory", 0.0)
    if ctx.out_of_time():
        # nothing else of the run waits on it: skipped, said so, rather than 8-23 s of
        # fresh processes on a loaded CPU past the quick profile's budget
        ctx.skip_note("peak memory")
        return PeakMemorySuite(
            status="skipped",
            reason="the profile's time budget was spent before this suite",
            workload=WORKLOAD,
            duration_s=time.perf_counter() - start,
        )
    if ctx.is_accelerator:
        points, method = _accel_points(ctx, batches)
    else:
        points, method = _cpu_points(ctx, batches)
    suite = PeakMemorySuite(method=method, workload=WORKLOAD, precision="fp32", points=points)
    if len(points) >= 2:
        from app.bench.timing import fit_linear

        with contextlib.suppress(ValueError):
            a, b = fit_linear([p.batch for p in points], [float(p.peak_bytes) for p in points])
            suite.fixed_bytes, suite.per_sample_bytes = a, b
    elif not points:
        timed_out = any(w.startswith("peak memory") and "time budget" in w for w in ctx.warnings)
        suite.status = "skipped" if timed_out else "failed"
        suite.reason = "; ".join(ctx.warnings[-len(batches) :])[:500] or "no measurement"
    suite.duration_s = time.perf_counter() - start
    return suite


if __name__ == "__main__":  # child process entry point
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child_main(json.loads(sys.argv[2]))), flush=True)
    else:
        print("usage: python -m app.bench.suites.peak_memory --child JSON", file=sys.stderr)
        sys.exit(2)
