"""A SkyPilot task that rents one offer's instance, installs GPU Advisor there, benchmarks
the machine and uploads the report: measure a candidate for a few dollars before renting
it for weeks. Nothing here launches anything."""

from __future__ import annotations

import shlex
from urllib.parse import urlsplit

import yaml

from app.domain.cost import CloudOffer


class TaskDumper(yaml.SafeDumper):
    """Multi-line commands as literal blocks, the way SkyPilot task files are written."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


TaskDumper.add_representer(str, _str)


class NotLaunchable(ValueError):
    """The offer is not an instance SkyPilot can request (e.g. a per-GPU list price)."""


LOOPBACK = ("localhost", "127.", "::1", "[::1]", "0.0.0.0")


def _loopback_warning(upload_url: str) -> str:
    host = urlsplit(upload_url).hostname or ""
    if not host.startswith(LOOPBACK) and host not in LOOPBACK:
        return ""
    return (
        f"# WARNING: the upload URL {upload_url} is this computer's loopback address: a rented\n"
        "# machine cannot reach it. Serve GPU Advisor where the machine can reach it and pass\n"
        "# that address (gpu-advisor bench --upload https://your-server/), or change the run to\n"
        "# --output report.json, copy the file back and POST it to /api/v1/device-reports.\n"
    )


def task_yaml(
    offer: CloudOffer,
    gpu_slug: str,
    upload_url: str,
    *,
    profile: str = "standard",
    workdir: str = ".",
) -> str:
    if not offer.accelerator:
        raise NotLaunchable(
            f"{offer.provider} '{offer.instance_type}' is a per-GPU list price, not an instance "
            "SkyPilot can launch; pick an offer imported from a SkyPilot catalog"
        )
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
        "envs": {"GPU_ADVISOR_UPLOAD_TOKEN": ""},
        "setup": (
            "set -e\n"
            "python3 -m pip install --upgrade pip\n"
            "python3 -m pip install torch\n"
            "python3 -m pip install .\n"
        ),
        "run": f"set -e\nnvidia-smi || true\n{bench}\n",
    }
    header = _loopback_warning(upload_url) + (
        f"# GPU Advisor: benchmark {gpu_slug} on {offer.provider} {offer.instance_type}\n"
        f"# ({offer.gpus} GPU(s), ${offer.usd_per_hour:.2f}/h as of {offer.as_of}; "
        f"source: {offer.source})\n"
        "# Launch from a GPU Advisor checkout with: sky launch -c advisor-bench task.yaml\n"
        "# and stop the machine after the run: sky down advisor-bench\n"
    )
    return header + yaml.dump(task, Dumper=TaskDumper, sort_keys=False, default_flow_style=False)
