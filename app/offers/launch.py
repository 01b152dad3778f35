"""A SkyPilot task that rents one offer's instance, installs GPU Advisor there, benchmarks
the machine and uploads the report: measure a candidate for a few dollars before renting
it for weeks. Nothing here launches anything."""

from __future__ import annotations

import shlex
import textwrap
from functools import lru_cache
from urllib.parse import urlsplit

import yaml

from app.bench.server_url import base_url_problem
from app.domain.cost import CloudOffer
from app.offers.files import is_control


class TaskDumper(yaml.SafeDumper):
    """Multi-line commands as literal blocks, the way SkyPilot task files are written."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


TaskDumper.add_representer(str, _str)


# The benchmark measures the versions the project pins, not whatever is newest on the day:
# requirements-bench.lock (in the checkout SkyPilot syncs as the workdir) pins torch and every
# other package the runner imports. The lock writes torch without the local "+cpu" label
# (Makefile, `lock`), so on a Linux GPU machine the same pin takes PyPI's CUDA build, as the
# bench image does (Dockerfile, target bench); the project then installs over the pinned set.
BENCH_LOCK = "requirements-bench.lock"
# PyPI's torch wheels are CUDA builds: a ROCm machine would benchmark its CPU. PyTorch publishes
# its ROCm builds on its own index (pytorch.org, "Get Started", Linux / Pip / ROCm). rocm7.2 is
# the index that carries torch 2.13.0, the release the lock files pin and the bench extra's
# range (<2.14) ends at: installed first, its 2.13.0+rocm7.2 satisfies the lock's torch==2.13.0
# (a pin without a local label matches any, PEP 440), so the lock leaves it in place. (The stored
# copies of pytorch.org here do not list 2.13's ROCm index; torch 2.13.0+rocm7.2 from
# download.pytorch.org/whl/rocm7.2 is what public ROCm setups install.)
TORCH_INSTALL = {
    "cuda": "",
    "rocm": "python3 -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/rocm7.2\n",
}
# The vendor's device listing, printed before the run (never fails it)
SMI = {"cuda": "nvidia-smi || true", "rocm": "rocm-smi || true"}


@lru_cache(maxsize=1)
def _shipped_backends() -> dict[str, tuple[str, ...]]:
    """Each shipped catalog GPU's backends (data/gpus/*.yaml): cuda, rocm, ..."""
    from app.catalog.loader import read_catalog
    from app.shipped.rules import DATA_DIR

    return {g.slug: tuple(g.backends) for g in read_catalog(DATA_DIR)}


def backend_of(gpu_slug: str) -> str:
    """The backend the benchmark installs torch for: rocm for a GPU the catalog runs on ROCm,
    else cuda (the launchable offers are NVIDIA's and AMD's)."""
    return "rocm" if "rocm" in _shipped_backends().get(gpu_slug, ()) else "cuda"


def upload_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be the upload address, or None. It is written into the task's shell
    line and YAML: a newline or other control character would end the line there and start
    another (a broken task at best, an injected command at worst), and no URL has whitespace."""
    for i, ch in enumerate(url):
        if ch.isspace() or is_control(ch):
            return (
                f"the upload URL may not contain whitespace or control characters ({ch!r} at {i})"
            )
    reason = base_url_problem(url)
    return None if reason is None else f"the upload URL is not a server's base URL: {reason}"


class NotLaunchable(ValueError):
    """The offer is not an instance SkyPilot can request (e.g. a per-GPU list price)."""


LOOPBACK = ("localhost", "127.", "::1", "[::1]", "0.0.0.0")


def loopback_warning(upload_url: str) -> str:
    """Why a rented machine cannot upload to ``upload_url`` (a loopback address), in plain
    words; "" for any other address. The task file carries it as a comment and the CLI says
    it on stderr too: a warning only inside a file written with -o went unseen."""
    host = urlsplit(upload_url).hostname or ""
    if not host.startswith(LOOPBACK) and host not in LOOPBACK:
        return ""
    return (
        f"the upload URL {upload_url} is this computer's loopback address: a rented "
        "machine cannot reach it. Serve GPU Advisor where the machine can reach it and pass "
        "that address (gpu-advisor bench --upload https://your-server/), or change the run to "
        "--output report.json, copy the file back and POST it to /api/v1/device-reports."
    )


def _loopback_comment(upload_url: str) -> str:
    warning = loopback_warning(upload_url)
    if not warning:
        return ""
    lines = textwrap.wrap("WARNING: " + warning, width=86, break_on_hyphens=False)
    return "".join(f"# {line}\n" for line in lines)


def _one_line(text: object) -> str:
    """``text`` for the task's comment header: every control character written as its escape
    (a newline as \\n), so that a value read from an offer file (its source, provider or
    instance type) cannot end the comment and start a YAML key of its own."""
    return "".join(ascii(ch)[1:-1] if is_control(ch) else ch for ch in str(text))


def task_yaml(
    offer: CloudOffer,
    gpu_slug: str,
    upload_url: str,
    *,
    profile: str = "standard",
    workdir: str = ".",
    backend: str | None = None,
    nodes: int = 1,
) -> str:
    """``backend``: the GPU's (cuda, rocm), which picks the torch build; by default the
    shipped catalog's for ``gpu_slug`` (``backend_of``). ``nodes``: instances of the offer
    side by side, for a GPU count no one instance holds (16 H100s as two 8-GPU servers):
    SkyPilot's ``num_nodes``, each node with the offer's accelerators, and ``run`` executed on
    every node (docs.skypilot.co, "Distributed Multi-Node Jobs")."""
    if not offer.accelerator:
        raise NotLaunchable(
            f"{offer.provider} '{offer.instance_type}' is a per-GPU list price, not an instance "
            "SkyPilot can launch; pick an offer imported from a SkyPilot catalog"
        )
    kind = backend if backend in TORCH_INSTALL else backend_of(gpu_slug)
    bench = " ".join(
        [
            "gpu-advisor bench",
            f"--profile {shlex.quote(profile)}",
            f"--gpu {shlex.quote(gpu_slug)}",
            f"--upload {shlex.quote(upload_url)}",
            '${GPU_ADVISOR_UPLOAD_TOKEN:+--token "$GPU_ADVISOR_UPLOAD_TOKEN"}',
        ]
    )
    task = {
        "name": f"gpu-advisor-bench-{gpu_slug}",
        # SkyPilot syncs this folder (a GPU Advisor checkout) to the machine
        "workdir": workdir,
        "resources": {
            "cloud": offer.provider,
            "instance_type": offer.instance_type,
            # SkyPilot's own accelerator name for this cloud, and the instance's GPU count
            "accelerators": f"{offer.accelerator}:{offer.gpus}",
            "use_spot": offer.tier == "spot",
        },
        # each node is one instance with the accelerators above; SkyPilot provisions them as
        # one cluster on the provider's network and runs `run` on every one
        **({"num_nodes": nodes} if nodes > 1 else {}),
        "envs": {"GPU_ADVISOR_UPLOAD_TOKEN": ""},
        "setup": (
            "set -e\n"
            "python3 -m pip install --upgrade pip\n"
            f"{TORCH_INSTALL[kind]}"
            f"python3 -m pip install -r {BENCH_LOCK}\n"
            "python3 -m pip install .\n"
        ),
        "run": f"set -e\n{SMI[kind]}\n{bench}\n",
    }
    shape = (
        f"{nodes} nodes × {offer.gpus} GPU(s), ${offer.usd_per_hour:.2f}/h each, "
        f"${offer.usd_per_hour * nodes:.2f}/h in all"
        if nodes > 1
        else f"{offer.gpus} GPU(s), ${offer.usd_per_hour:.2f}/h"
    )
    # the benchmark measures one machine (its collectives run over that machine's own GPUs):
    # across nodes each uploads its own report, and the link between them is not measured
    each = (
        f"# Every node runs the benchmark and uploads its own report ({nodes} reports); the\n"
        "# network between the nodes is not measured.\n"
        if nodes > 1
        else ""
    )
    header = _loopback_comment(upload_url) + (
        f"# GPU Advisor: benchmark {_one_line(gpu_slug)} on {_one_line(offer.provider)} "
        f"{_one_line(offer.instance_type)}\n"
        f"# ({shape} as of {_one_line(offer.as_of)}; source: {_one_line(offer.source)})\n"
        + each
        + "# Launch from a GPU Advisor checkout with: sky launch -c advisor-bench task.yaml\n"
        "# and stop the machine"
        + ("s" if nodes > 1 else "")
        + " after the run: sky down advisor-bench\n"
    )
    return header + yaml.dump(task, Dumper=TaskDumper, sort_keys=False, default_flow_style=False)
