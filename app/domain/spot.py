"""What an interruptible (spot) rental costs a training job beyond its price: checkpoints
and restarts.

A job that can be interrupted saves its training state every ``tau`` and, when the instance
is taken back, loses the work since the last save plus the time to get an instance again and
read the state back (``R``). With a save taking ``C`` and interruptions every ``M`` on
average (exponentially distributed), the first-order waste is

    C / tau + tau / (2 M) + R / M        (a fraction of the useful run time)

minimised at Young's interval tau = sqrt(2 C M) (J. W. Young, "A first order approximation
to the optimum checkpoint interval", CACM 17(9), 1974); Daly's higher-order estimate
(J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
FGCS 22(3), 2006, eq. 37) refines it where C is not small against M.

The state a checkpoint writes is what training cannot rebuild: the fp32 copy of every
trainable parameter (the master weights under mixed precision, the weights themselves in
fp32; LoRA's adapters alone, the frozen base being reloaded from its release) and the
optimizer's state per trainable parameter, as the memory model counts them
(workload.OPTIMIZER_BYTES). Gradients and activations are rebuilt by the next step.

No interruption rate is used here unless a caller has a sourced one: none is published for
the spot offers the catalog ships (docs/methodology.md, "Spot rentals")."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.domain.cost import OfferChoice
from app.domain.evaluate import hours_text
from app.domain.workload import GB, OPTIMIZER_BYTES, WorkloadSpec, job_lora_params

# fp32: the optimizer steps an fp32 copy of every trainable parameter, whatever the compute
# precision (workload.training_policy: autocast's master copy, fp32 training's weights, LoRA's
# adapters, which PEFT keeps in fp32)
MASTER_BYTES = 4.0


def trainable_params(work: WorkloadSpec) -> float:
    if work.peft in ("lora", "qlora"):
        return job_lora_params(work)
    return work.model.params


def checkpoint_gb(work: WorkloadSpec) -> float:
    """The training state one checkpoint holds (GB, 1e9 bytes), all GPUs together."""
    per_param = MASTER_BYTES + OPTIMIZER_BYTES.get(work.optimizer, 8.0)
    return trainable_params(work) * per_param / GB


def young_interval(write_h: float, mtbi_h: float) -> float:
    """Young's checkpoint interval sqrt(2 C M), in the unit of its arguments."""
    _positive(write_h=write_h, mtbi_h=mtbi_h)
    return math.sqrt(2.0 * write_h * mtbi_h)


def daly_interval(write_h: float, mtbi_h: float) -> float:
    """Daly's higher-order interval: sqrt(2CM)·[1 + (1/3)·sqrt(C/2M) + C/(18M)] − C while
    C < 2M; past that a save outlasts the expected uptime and the interval is M."""
    _positive(write_h=write_h, mtbi_h=mtbi_h)
    c, m = write_h, mtbi_h
    if c >= 2.0 * m:
        return m
    r = c / (2.0 * m)
    return math.sqrt(2.0 * c * m) * (1.0 + math.sqrt(r) / 3.0 + r / 9.0) - c


def overhead_fraction(
    write_h: float, restart_h: float, mtbi_h: float, interval_h: float | None = None
) -> float:
    """The first-order waste C/tau + tau/(2M) + R/M, a fraction of the useful run time, at
    ``interval_h`` (Young's interval when None)."""
    tau = young_interval(write_h, mtbi_h) if interval_h is None else interval_h
    _positive(interval_h=tau)
    if restart_h < 0.0:
        raise ValueError("restart_h must be >= 0")
    return write_h / tau + tau / (2.0 * mtbi_h) + restart_h / mtbi_h


def break_even_overhead(spot_usd_per_hour: float, on_demand_usd_per_hour: float) -> float | None:
    """The extra run time, as a fraction of the job's, at which the spot rental costs what
    the same instance does on demand: spot × (1 + f) = on-demand. None when spot is not the
    cheaper (there is nothing to break even with)."""
    if spot_usd_per_hour <= 0.0 or on_demand_usd_per_hour <= spot_usd_per_hour:
        return None
    return on_demand_usd_per_hour / spot_usd_per_hour - 1.0


# A storage cap in MBps is read as MiB/s, the larger of its two readings: a time at the cap is
# a lower bound either way (data/offers/checkpoint-storage.yaml).
MBPS_BYTES = float(1 << 20)


@dataclass(frozen=True, slots=True)
class SpotTraining:
    """What a training row rented at a spot price can say without an interruption rate."""

    checkpoint_gb: float
    on_demand_usd_per_hour: float | None  # the same instances on demand, every instance
    break_even_overhead: float | None  # break_even_overhead() of the rental
    break_even_extra_h: float | None  # that fraction of the job's time to finish
    # the instance type's documented cap on persistent-disk throughput (MBps), and one
    # checkpoint's write (or read-back) time at that cap over every instance: a lower bound
    disk_mbps: float | None = None
    write_h_min: float | None = None


def spot_training(
    choice: OfferChoice, work: WorkloadSpec, hours: float | None, disk_mbps: float | None = None
) -> SpotTraining:
    """``choice`` rented at its spot price (``choice.spot``) for ``hours`` of training;
    ``disk_mbps`` the instance type's persistent-disk cap where one is sourced."""
    o = choice.offer
    # an offer sold only as spot has no on-demand price of its own to break even with
    on_demand = o.usd_per_hour * choice.instances if o.tier != "spot" else None
    f = None if on_demand is None else break_even_overhead(choice.usd_per_hour, on_demand)
    state = checkpoint_gb(work)
    # the state is sharded over the GPUs (the memory model's layout): every instance writes
    # its share at once
    write = (
        None
        if disk_mbps is None or disk_mbps <= 0.0
        else state * GB / (disk_mbps * MBPS_BYTES * choice.instances) / 3600.0
    )
    return SpotTraining(
        checkpoint_gb=state,
        on_demand_usd_per_hour=on_demand if f is not None else None,
        break_even_overhead=f,
        break_even_extra_h=None if f is None or hours is None else f * hours,
        disk_mbps=disk_mbps if write is not None else None,
        write_h_min=write,
    )


def _positive(**values: float) -> None:
    for name, v in values.items():
        if not v > 0.0:
            raise ValueError(f"{name} must be > 0")


def break_even_text(f: float, extra_h: float | None) -> str:
    """The break-even overhead as the row's warning and its page both say it."""
    share = f"{f:,.1f}× the run's own time" if f >= 1 else f"{f:.0%} to the run's time"
    return share + (f" ({hours_text(extra_h)} on this run)" if extra_h is not None else "")
