"""Money: purchase, rental, energy, cost to finish, and when buying beats renting.

Unknown prices stay ``None`` all the way through; nothing is ever priced at zero.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, KeysView, Mapping
from dataclasses import dataclass, field
from datetime import date

import numpy as np
from numpy.typing import NDArray

from app.domain import topology
from app.domain.figures import sig_figs
from app.domain.gpu import GpuSpec
from app.domain.units import vram
from app.vocab import CLUSTER_TIERS, HOST_TIERS, SECOND_HAND_CONDITIONS

# the US residential average revenue per kWh in early 2024: 15.45 ¢ in January, 16.88 ¢ in April
# (EIA Electricity Monthly Update, End Use; docs/methodology.md, "Power and energy")
DEFAULT_ELECTRICITY_USD_PER_KWH = 0.15
# The start-up a rented job is billed for before its first step, per instance and on every GPU
# of it (the hourly price is the whole instance's): one minute. Clouds bill from when the
# instance runs, so the boot, the image pull and the model's download and load are paid at the
# GPUs' rate, and the billing itself has a floor: AWS EC2 bills Linux instances per second with
# a minimum of 60 s (AWS, "Announcing Amazon EC2 per second billing", 2017-10-02: a floor on
# the whole bill, not a minute added to it), Lambda's
# on-demand instances in one-minute increments from when they pass their health checks
# (docs.lambda.ai, Billing), Scaleway's GPU instances per minute of uptime, start-up included
# (scaleway/docs-content, instances FAQ). RunPod bills per second, its serverless workers' start
# (initialising the container, loading the model into GPU memory) included
# (docs.runpod.io/serverless/pricing). Published start-ups run from 30-120 s with a cached or
# uncached image on a GPU marketplace (io.net's FAQ) to 6-10 min for a node provisioned from
# zero and a 10 GB image pulled (Union.ai's engineering blog): an assumed minute, near the low
# end of those, which moves only jobs of minutes (docs/methodology.md 6.7r, "ex").
RENT_STARTUP_H = 1 / 60


def rent_job_usd(hourly_usd: float, hours: float) -> float:
    """Renting for a job of ``hours`` at ``hourly_usd`` (the whole instance or instances), its
    start-up (RENT_STARTUP_H) billed on top."""
    return hourly_usd * (hours + RENT_STARTUP_H)


# Which purchase price a bought card is priced at: "auto" takes a new price (unless one more
# than NEW_PRICE_LEAD_MONTHS older than a used or market price, or above an as-current market
# price), else a used or market price, else a launch price at most LAUNCH_PRICE_YEARS old
# (choose_purchase); the others take only that basis, but "used" pays a current new price
# where that is lower.


# Plain and slotted for the same reason as perf.PerfEstimate: one per configuration.
@dataclass(slots=True)
class CostEstimate:
    purchase_usd: float | None
    hourly_usd: float | None
    energy_usd_per_hour: float | None
    power_w: float | None
    time_to_finish_h: float | None
    rent_to_finish_usd: float | None
    energy_to_finish_usd: float | None
    buy_to_finish_usd: float | None  # purchase + energy for the job
    break_even_hours: float | None
    samples_per_usd_rent: float | None
    samples_per_usd_buy: float | None
    # The hours of use a bought card's price is spread over (the user's usage): the horizon
    # of samples_per_usd_buy, and of upfront() for renting.
    horizon_hours: float
    purchase_as_of: str | None = None
    hourly_as_of: str | None = None
    hourly_provider: str | None = None
    purchase_basis: str | None = None  # new | used | launch, when priced from offers
    # the start-up (RENT_STARTUP_H) a rented job pays within rent_to_finish_usd
    rent_startup_usd: float | None = None


def estimate_cost(
    gpu: GpuSpec,
    num_gpus: int,
    throughput: float,
    time_to_finish_h: float | None,
    electricity_usd_per_kwh: float | None = None,
    pricing: Pricing | None = None,
    usage: Usage | None = None,
) -> CostEstimate:
    """Per-GPU catalog prices × N, or, given ``pricing``, the chosen offers: the whole
    rented instance per hour and N cards at the named purchase basis. A bought card's price
    is spread over the usage's hours (``pricing.usage``, else ``usage``, else the default
    40 h a week for 3 years): the same horizon as the buy-versus-rent verdict."""
    purchase, hourly, power, energy_h, horizon = rates(
        gpu, num_gpus, electricity_usd_per_kwh, pricing, usage
    )
    rent_finish = energy_finish = buy_finish = startup = None
    if time_to_finish_h is not None:
        if hourly is not None:
            rent_finish = rent_job_usd(hourly, time_to_finish_h)
            startup = hourly * RENT_STARTUP_H
        if energy_h is not None:
            energy_finish = energy_h * time_to_finish_h
        if purchase is not None and energy_finish is not None:
            buy_finish = purchase + energy_finish

    # the hours at which buying starts to pay: the price less what the user resells the cards
    # for, as the verdict has it (a break-even on the whole price said 15,200 h beside the
    # verdict's 7,600 at a resale fraction of 0.5)
    break_even = None
    if purchase is not None and hourly is not None:
        saving = hourly - (energy_h or 0.0)
        held = pricing.usage if pricing is not None else usage or Usage()
        net = purchase * (1.0 - held.resale_fraction)
        break_even = net / saving if saving > 0 else None

    # work per dollar rented: over the job where it has a length, so the start-up it pays
    # counts (a 17-second job on 4 B200s is billed for 77 s), else the hourly rate's
    per_rent = throughput * 3600.0 / hourly if hourly else None
    if per_rent is not None and rent_finish and time_to_finish_h:
        per_rent = throughput * 3600.0 * time_to_finish_h / rent_finish
    per_buy = None
    if purchase:
        # what owning costs over the horizon: the price less its resale, as the verdict
        # counts it (a value on the whole price ranked renting ahead where the verdict said buy)
        held = pricing.usage if pricing is not None else usage or Usage()
        owned = purchase * (1.0 - held.resale_fraction) + (energy_h or 0.0) * horizon
        # resold whole and run on free power, owning costs nothing: no work per dollar to rank
        per_buy = throughput * 3600.0 * horizon / owned if owned > 0 else None
    # Provenance follows whichever prices were used: the chosen offers, else the catalog's.
    if pricing is not None:
        rent_offer = pricing.rent.offer if pricing.rent is not None else None
        purchase_as_of = pricing.buy.as_of if pricing.buy is not None else None
        hourly_as_of = rent_offer.as_of if rent_offer is not None else None
        hourly_provider = rent_offer.provider if rent_offer is not None else None
        basis = pricing.buy.condition if pricing.buy is not None else None
    else:
        purchase_as_of = gpu.street_price.as_of if gpu.street_price is not None else None
        hourly_as_of = gpu.cloud_price.as_of if gpu.cloud_price is not None else None
        hourly_provider = gpu.cloud_price.provider if gpu.cloud_price is not None else None
        basis = None
    # positional, in field order: one per configuration costed
    return CostEstimate(
        purchase,
        hourly,
        energy_h,
        power,
        time_to_finish_h,
        rent_finish,
        energy_finish,
        buy_finish,
        break_even,
        per_rent,
        per_buy,
        horizon,
        purchase_as_of,
        hourly_as_of,
        hourly_provider,
        basis,
        startup,
    )


Rates = tuple[float | None, float | None, float | None, float | None, float]


def rates(
    gpu: GpuSpec,
    num_gpus: int,
    electricity_usd_per_kwh: float | None = None,
    pricing: Pricing | None = None,
    usage: Usage | None = None,
) -> Rates:
    """(purchase, per hour, power in W, energy per hour, horizon in hours) of ``num_gpus``
    cards, as ``estimate_cost`` prices them."""
    n = max(1, num_gpus)
    kwh_price = (
        DEFAULT_ELECTRICITY_USD_PER_KWH
        if electricity_usd_per_kwh is None
        else electricity_usd_per_kwh
    )
    purchase, hourly = prices(gpu, n, pricing)
    horizon = (pricing.usage if pricing is not None else usage or Usage()).hours
    # GPUs run near their board power under sustained training; inference sits lower, so TDP
    # is an upper bound the explanation calls so.
    power = gpu.tdp_w * n if gpu.tdp_w is not None else None
    energy_h = power / 1000.0 * kwh_price if power is not None else None
    return purchase, hourly, power, energy_h, horizon


def values(
    throughput: NDArray[np.float64],
    terms: NDArray[np.float64],
    acquisition: str,
    resale_fraction: float = 0.0,
) -> NDArray[np.float64]:
    """``value(estimate_cost(...), acquisition)`` of each row at its throughput and ``terms``
    (a row each: purchase, per hour, energy per hour and horizon as ``rates`` gives them, NaN
    for None) under the usage's ``resale_fraction``, to the last bit (the same float64
    operations in the same order, elementwise), for a job with no length; NaN where the value
    is None. With a length, the rented value pays the start-up too (RENT_STARTUP_H) and is
    lower: these stay upper bounds, which is what a balanced answer's bounds need."""
    purchase, hourly, energy_h, horizon = terms.T
    with np.errstate(divide="ignore", invalid="ignore"):
        rent = np.where(hourly != 0, throughput * 3600.0 / hourly, np.nan)  # NaN stays NaN
        owned = (
            purchase * (1.0 - resale_fraction)
            + np.where(np.isnan(energy_h), 0.0, energy_h) * horizon
        )
        bought = (purchase != 0) & (owned > 0)
        buy = np.where(bought, throughput * 3600.0 * horizon / owned, np.nan)
    if acquisition == "buy":
        return buy
    if acquisition == "rent":
        return rent
    return np.where(np.isnan(rent) | (~np.isnan(buy) & (rent < buy)), buy, rent)


def priced_as_asked(acquisition: str, purchase: float | None, hourly: float | None) -> bool:
    """Whether a row has a price the way the question acquires (its ``price_known``): asked
    to buy, a purchase; to rent, an hour; under 'either', one of them. Asked to buy, an A100
    SXM only rented had read ``price_known: true`` beside no purchase price, ranked after
    every priced card as an unpriced one is (README: GPUs without a price stay in
    'balanced' answers with ``price_known: false``)."""
    if acquisition == "buy":
        return purchase is not None
    if acquisition == "rent":
        return hourly is not None
    return purchase is not None or hourly is not None


#: What a row lacks when it has no price the way asked (offer lines, the verdict's words).
NO_PRICE_WORDS = {
    "rent": "No rental price known",
    "buy": "No purchase price known",
    "either": "No price known",
}


def prices(
    gpu: GpuSpec, num_gpus: int, pricing: Pricing | None = None
) -> tuple[float | None, float | None]:
    """(purchase, per hour) of ``num_gpus`` cards: the chosen offers' (the whole instance per
    hour) given ``pricing``, else the catalog's per-GPU prices × N."""
    if pricing is not None:
        return pricing.purchase_usd, pricing.rent.usd_per_hour if pricing.rent else None
    n = max(1, num_gpus)
    unit_buy, unit_rent = gpu.purchase_usd, gpu.hourly_usd
    return (
        unit_buy * n if unit_buy is not None else None,
        unit_rent * n if unit_rent is not None else None,
    )


def job_cost(cost: CostEstimate, acquisition: str) -> float | None:
    """What finishing the job costs under the chosen acquisition (the cheaper for 'either')."""
    options = []
    if acquisition in ("rent", "either") and cost.rent_to_finish_usd is not None:
        options.append(cost.rent_to_finish_usd)
    if acquisition in ("buy", "either") and cost.buy_to_finish_usd is not None:
        options.append(cost.buy_to_finish_usd)
    return min(options) if options else None


def job_cost_at(cost: CostEstimate, acquisition: str, share: float) -> float | None:
    """``job_cost`` were the job run at ``share`` of its estimated throughput: it takes 1/share
    as long, so its rent (the start-up as before) and its electricity grow with it, a purchase
    does not. What 'cheapest' ranks a row on whose band says its speed is likely overstated
    (rank.ranked_share: the band's low end)."""
    hours = cost.time_to_finish_h
    if share == 1.0 or hours is None:
        return job_cost(cost, acquisition)
    return job_cost_over(
        acquisition,
        hours / share,
        cost.hourly_usd if cost.rent_to_finish_usd is not None else None,
        cost.purchase_usd if cost.buy_to_finish_usd is not None else None,
        cost.energy_usd_per_hour,
    )


def job_cost_over(
    acquisition: str,
    hours: float,
    hourly_usd: float | None,
    purchase_usd: float | None,
    energy_usd_per_hour: float | None,
) -> float | None:
    """What a job of ``hours`` costs under ``acquisition`` (the cheaper for 'either'): rented
    at ``hourly_usd`` with its start-up, or bought at ``purchase_usd`` plus its electricity;
    None for a basis without its price. ``job_cost_at``'s rule on figures alone, which the
    answer's verdict reads off a row to say the cost a row was ranked on."""
    options = []
    if acquisition in ("rent", "either") and hourly_usd:
        options.append(rent_job_usd(hourly_usd, hours))
    buys = acquisition in ("buy", "either")
    if buys and purchase_usd is not None and energy_usd_per_hour is not None:
        options.append(purchase_usd + energy_usd_per_hour * hours)
    return min(options) if options else None


def job_cost_missing(cost: CostEstimate, acquisition: str, name: str) -> str | None:
    """Why ``job_cost`` is None where the row is bought at a known price and the job has a
    length: the job's electricity needs the card's power (``rates``: ``tdp_w`` × N), and the
    catalog has none for ``name`` (Apple publishes wall power only for the Macs it tests), so
    a blank "job $" beside a known price had read as an error; None where a job cost is
    given, or where none could be (no price, no length, a rental's own cost)."""
    if job_cost(cost, acquisition) is not None or acquisition == "rent":
        return None
    if cost.purchase_usd is None or cost.time_to_finish_h is None or cost.power_w is not None:
        return None
    return (
        f"no job cost: {name}'s price is known but the catalog has no power figure for it "
        "(its maker publishes none for this configuration), so the job's electricity, and "
        "with it the cost to finish on bought hardware, is not estimated"
    )


def outlasts_horizon(cost: CostEstimate, acquisition: str) -> float | None:
    """How many times over the job outlasts the hours a bought row's price is spread over
    (``horizon_hours``: the usage's years × 52 × hours a week), where the row offers buying
    and the job is the longer; None otherwise. The buy value and the verdict assume the
    hardware is kept that long and resold at its end: a 1,300-day job on cards kept a year
    (8,736 h) had been the cheapest answer with no word of it."""
    if acquisition not in ("buy", "either") or cost.buy_to_finish_usd is None:
        return None
    hours, horizon = cost.time_to_finish_h, cost.horizon_hours
    if hours is None or horizon <= 0 or hours <= horizon:
        return None
    return hours / horizon


def value(cost: CostEstimate, acquisition: str) -> float | None:
    """Samples per dollar under the chosen acquisition (the better for 'either')."""
    # Branches rather than a list: called for every candidate of every ranking.
    rent = cost.samples_per_usd_rent if acquisition != "buy" else None
    buy = cost.samples_per_usd_buy if acquisition != "rent" else None
    if rent is None:
        return buy
    return rent if buy is None or rent >= buy else buy


def upfront(cost: CostEstimate, acquisition: str) -> float | None:
    """Cheapest way in when there is no job length: purchase, or renting for the same hours
    of use a bought card is spread over."""
    return upfront_at(cost.purchase_usd, cost.hourly_usd, cost.horizon_hours, acquisition)


def upfront_at(
    purchase: float | None, hourly: float | None, horizon: float, acquisition: str
) -> float | None:
    """``upfront`` of a cost at these rates (``rates``' purchase, per hour and horizon): the
    lesser of the ways in the acquisition allows, the purchase where they tie (min's choice)."""
    buy = purchase if acquisition in ("buy", "either") else None
    rent = hourly * horizon if hourly is not None and acquisition in ("rent", "either") else None
    if buy is None or rent is None:
        return rent if buy is None else buy
    return rent if rent < buy else buy


# ---------------------------------------------------------------- offers: what to rent, what to buy

ON_DEMAND_TIERS = ("on-demand",)
ALL_TIERS = HOST_TIERS
HOURS_PER_YEAR_WEEKS = 52


@dataclass(frozen=True, slots=True)
class CloudOffer:
    """One rentable instance shape; ``usd_per_hour`` is for the whole instance."""

    provider: str
    instance_type: str
    gpus: int
    usd_per_hour: float
    spot_usd_per_hour: float | None
    tier: str  # on-demand | spot | marketplace | community
    as_of: str
    source: str
    regions: int | None = None
    accelerator: str | None = None
    # A price seen elsewhere (a per-GPU figure quoted in a note, a blog, a hobby repository),
    # not an instance a provider's own catalog lists: shown beside the rows, never rented
    # (data/offers/README.md).
    quoted: bool = False
    # The instance's vCPUs and host RAM as its catalog lists them (SkyPilot's vCPUs and
    # MemoryGiB: GiB, 2^30 bytes); None where the source gives none, which no rule guesses.
    vcpus: float | None = None
    ram_gib: float | None = None

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.usd_per_hour / self.gpus

    @property
    def seen_text(self) -> str:
        """How a quoted price is shown: seen at $x (source, date) (``seen_text``)."""
        return seen_text(self.usd_per_gpu_hour, self.provider, self.source, self.as_of)


# "owner/repo path/to/file.ext": how a source in a repository's file is titled (data/gpus)
_REPO_FILE = re.compile(r"([\w.-]+/[\w.-]+) [\w./-]+\.\w+")


def seen_text(usd_per_gpu_hour: float, provider: str | None, source: str, as_of: str) -> str:
    """A price seen elsewhere as it is shown, never as an offer: seen at $x (source, date). The
    source by its name, the part of its title before the first ": " or " (" (a page's title;
    a repository's file by its repository); the offers API keeps the whole title. The
    recommendation's quoted offers and a catalog entry's own quoted `cloud_price` read alike."""
    # the pages' figure (templating.num), as the row's cell and details quote it beside this
    per = f"${sig_figs(usd_per_gpu_hour, 3)}/h per GPU"
    name = source.split(": ", 1)[0].split(" (", 1)[0]
    if name.startswith(("http://", "https://")):
        # a bare address, by its host and file: the whole of a pinned repository URL had cost
        # the serving answer page ~150 bytes a row, past its size budget
        host, _, path = name.split("://", 1)[1].partition("/")
        leaf = path.rstrip("/").rsplit("/", 1)[-1]
        name = f"{host}/…/{leaf}" if leaf else host
    repo = _REPO_FILE.fullmatch(name)
    if repo is not None:
        # a file of a repository ("owner/repo path/to/NOTE.md") read as a path, not as who
        # said it: the owner's note is what the price rests on
        name = f"a note in the repository {repo[1]}"
    where = f" on {provider}" if provider else ""
    return f"seen at {per}{where} ({name}, {as_of})"


@dataclass(frozen=True, slots=True)
class PurchaseOffer:
    usd: float  # one card
    condition: str  # new | used | market (new or used listings) | launch
    as_of: str
    source: str
    # A launch price more than LAUNCH_PRICE_YEARS old (launch_is_stale): no longer what the
    # card costs, so purchase basis "auto" does not use it.
    stale: bool = False
    # the data's caveat on this price (purchase.yaml `note`), shown with it wherever it is paid
    note: str | None = None

    @property
    def second_hand(self) -> bool:
        """Whether the price may be a second-hand card's (a used price, or a market figure of
        the cheapest listings, new or used)."""
        return self.condition in SECOND_HAND_CONDITIONS

    @property
    def server_share(self) -> bool:
        """Whether the price is a whole server's share (its price ÷ its GPUs), host included:
        the data files such a row with a note that says so (data/offers/README.md, "Server-only
        parts": "... sold only as whole servers"). Every other price is the card or module
        alone."""
        return self.note is not None and SERVER_SHARE_WORDS in self.note


# The words data/offers/README.md ("Server-only parts") has a server-share price's note carry.
SERVER_SHARE_WORDS = "sold only as whole servers"


# How long a launch price stands in for a current one: a card more than three years past its
# launch sells used or not at all, far from its list price (a 2080 Ti is not $999 in 2026).
LAUNCH_PRICE_YEARS = 3


def launch_is_stale(as_of: str, today: date) -> bool:
    """Whether a launch price dated ``as_of`` (a year, or a year-month) is more than
    LAUNCH_PRICE_YEARS old on ``today``."""
    parts = [int(p) for p in as_of.split("-")[:2] if p.isdigit()]
    if not parts:
        return False
    year, month = parts[0], (parts[1] if len(parts) > 1 else 12)  # a bare year: its latest
    return (today.year - year) * 12 + (today.month - month) > LAUNCH_PRICE_YEARS * 12


@dataclass(frozen=True, slots=True)
class RentalPolicy:
    """Which offers a user accepts. Marketplace and community hosts are allowed unless
    ``tiers`` leaves them out; a spot price is used only when ``allow_spot``."""

    providers: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ALL_TIERS
    allow_spot: bool = False
    multi_node: bool = False  # several instances only where the job can span nodes


@dataclass(frozen=True, slots=True)
class OfferChoice:
    offer: CloudOffer
    instances: int
    gpus_used: int
    usd_per_hour: float  # what the job pays per hour, every instance together
    spot: bool
    # an accepted instance of this GPU smaller than the one chosen also holds the job (the
    # chosen one is cheaper all the same)
    smaller_offered: bool = False
    # the GPUs run copies that share nothing (offline inference over a dataset, each copy on
    # its own shard): several instances need no cluster network (``price_copies``)
    copies: bool = False

    @property
    def gpus_paid(self) -> int:
        return self.offer.gpus * self.instances

    @property
    def note(self) -> str | None:
        shape = f"{self.instances}× " if self.instances > 1 else ""
        if self.copies:
            return self._copies_note(shape)
        # several instances work as one job only over the fabric the estimate assumes
        # (topology.network); a provider's plain instances may lack it
        cluster = (
            f"; rents {shape}{self.offer.instance_type} side by side: book them as one "
            "cluster on the provider's network, at least as fast between servers as the "
            "row's split line assumes"
            if self.instances > 1
            else ""
        )
        if self.gpus_paid == self.gpus_used:
            return cluster[2:] or None
        why = (
            "cheaper than the smaller instances of this GPU on offer"
            if self.smaller_offered
            else "no smaller instance of this GPU is on offer"
        )
        return (
            f"pays for {shape}{self.offer.instance_type}, {self.offer.gpus}-GPU "
            f"({self.gpus_paid} GPUs) to use {self.gpus_used}: {why}{cluster}"
        )

    def _copies_note(self, shape: str) -> str | None:
        """The booking of copies that share nothing (``price_copies``), in words."""
        side = (
            f"rents {shape}{self.offer.instance_type} side by side, the copies on them "
            "sharing nothing (each on its own share of the samples): no cluster network needed"
            if self.instances > 1
            else ""
        )
        if self.gpus_paid == self.gpus_used:
            return side or None
        idle = self.gpus_paid - self.gpus_used
        return (
            f"pays for {shape}{self.offer.instance_type}, {self.offer.gpus}-GPU "
            f"({self.gpus_paid} GPUs) to use {self.gpus_used}: {idle} GPU"
            f"{'s' if idle > 1 else ''} idle at no saving" + (f"; {side}" if side else "")
        )


# ---------------------------------------------------------------- host RAM

# The least host RAM a GPU job's instance must have to load its model (docs/methodology.md,
# "hr"). Loading goes through host memory a checkpoint file at a time at best: safetensors'
# PyTorch reader maps a whole file (vLLM issue #759 shows PyTorch's "unable to mmap
# 16933256392 bytes ... Cannot allocate memory" for one 16.9 GB file), and
# Transformers with a device_map moves each weight to its GPU as a shard is read (PR #17341;
# without one it holds the whole model, docs "Instantiating a big model"). A checkpoint over
# this is cut into files of at most it by save_pretrained's default max_shard_size ("5GB ...
# easier to run on free-tier GPU instances without running out of memory"): the least one
# file of a larger model can be. Files cut bigger (10 GB, the guide's earlier default; the
# 16.9 GB file above) need more: a floor, an instance below it fails, one above may still.
CHECKPOINT_SHARD_GB = 5.0
# Each GPU process's own resident memory beside the weights: `import torch` plus one CUDA
# tensor, 438,632 kB maximum RSS (PyTorch 2.2 dev, CUDA 11.8, lazy module loading; pytorch
# issue #113326, measured with /usr/bin/time -v). vLLM, Transformers and a DataLoader's
# workers add more, unsourced, so not counted.
RUNTIME_RSS_GB = 438_632 * 1024 / 1e9


@dataclass(frozen=True, slots=True)
class HostNeed:
    """The host RAM an instance needs at the least for a job: the largest checkpoint file one
    process reads at once (the weights it loads, at most CHECKPOINT_SHARD_GB), plus each GPU
    process's own resident memory (one process per GPU used: torchrun, vLLM's workers)."""

    shard_gb: float
    per_process_gb: float = RUNTIME_RSS_GB

    def gb(self, processes: int) -> float:
        return self.shard_gb + self.per_process_gb * max(1, processes)

    def words(self, processes: int) -> str:
        """What the need rests on, in words (GiB, as the offers list host RAM)."""
        procs = max(1, processes)
        each = f"each of {procs} GPU processes" if procs > 1 else "its GPU process"
        return (
            f"{vram(self.gb(procs)):.1f} GiB: one {vram(self.shard_gb):.1f} GiB checkpoint "
            f"file at a time and {vram(self.per_process_gb):.2f} GiB for {each}"
        )


def host_need(weights_gb: float | None) -> HostNeed | None:
    """The host RAM a job that loads ``weights_gb`` of stored weights needs at the least
    (``HostNeed``); None where the weights are unknown."""
    if not weights_gb or weights_gb <= 0:
        return None
    return HostNeed(min(weights_gb, CHECKPOINT_SHARD_GB))


def _host_short(offer: CloudOffer, host: HostNeed | None, processes: int) -> bool:
    """Whether the offer's host RAM, where its catalog gives it, is below ``host``'s need for
    ``processes`` GPU processes on one instance. An offer with no RAM listed is not refused."""
    if host is None or offer.ram_gib is None:
        return False
    return offer.ram_gib < vram(host.gb(processes))


def host_short_words(
    offers: Iterable[CloudOffer], host: HostNeed, processes: int, gpus: int
) -> str:
    """Why no offer is rented where the only ones that hold ``gpus`` GPUs have too little
    host RAM: their most, against the need."""
    rams = [o.ram_gib for o in offers if o.ram_gib is not None]
    # sig_figs, not ",.3g": an 8-GPU server's 2,048 GiB had read "2.05e+03 GiB"
    most = f"at most {sig_figs(max(rams))} GiB of host RAM" if rams else "too little host RAM"
    return (
        f"every accepted offer of this GPU with {gpus} GPU{'s' if gpus > 1 else ''} or more "
        f"has {most}, under the least loading the model needs, {host.words(processes)}"
    )


def _accepts(offer: CloudOffer, policy: RentalPolicy) -> bool:
    if offer.quoted:
        return False  # a price seen elsewhere is shown, never rented
    if policy.providers and offer.provider.lower() not in {p.lower() for p in policy.providers}:
        return False
    if offer.tier == "spot":
        return policy.allow_spot
    return offer.tier in policy.tiers


def _hourly_rate(offer: CloudOffer, policy: RentalPolicy) -> tuple[float, bool]:
    """The instance's price per hour under the policy, and whether it is a spot price: the
    spot price only where the user allows spot and it is the lower."""
    spot_price = offer.spot_usd_per_hour
    if policy.allow_spot and spot_price is not None and spot_price < offer.usd_per_hour:
        return spot_price, True
    return offer.usd_per_hour, offer.tier == "spot"


def choose_offer(
    offers: list[CloudOffer],
    gpus_needed: int,
    policy: RentalPolicy = RentalPolicy(),
    node_gpus: int = 1,
    host: HostNeed | None = None,
) -> OfferChoice | None:
    """The cheapest accepted way to get ``gpus_needed`` GPUs on instance shapes that exist:
    one instance with at least that many GPUs (paying for all of them), or — when the policy
    allows several nodes — whole instances side by side, each holding at least ``node_gpus``
    (the server the estimate's multi-node communication assumes), from a provider's own
    instances (CLUSTER_TIERS: 8 community hosts had been booked as one InfiniBand cluster).
    An instance whose listed host RAM is below ``host``'s need for its GPU processes is not
    chosen (a 4 GiB one-H100 host had been ranked to load a 16 GB model). ``None`` when
    nothing fits."""
    n = max(1, gpus_needed)
    best: tuple[tuple[float, int, str, str], OfferChoice] | None = None
    for offer in offers:
        if offer.gpus <= 0 or not _accepts(offer, policy):
            continue
        if _host_short(offer, host, min(offer.gpus, n)):
            continue
        if offer.gpus >= n:
            instances = 1
        elif policy.multi_node and offer.gpus >= node_gpus and offer.tier in CLUSTER_TIERS:
            instances = -(-n // offer.gpus)
        else:
            continue
        price, spot = _hourly_rate(offer, policy)
        choice = OfferChoice(offer, instances, n, price * instances, spot)
        key = (choice.usd_per_hour, offer.gpus, offer.provider, offer.instance_type)
        if best is None or key < best[0]:
            best = (key, choice)
    if best is None:
        return None
    chosen = best[1]
    if chosen.gpus_paid > n and any(
        n <= o.gpus < chosen.offer.gpus and _accepts(o, policy) and not _host_short(o, host, n)
        for o in offers
    ):
        return dataclasses.replace(chosen, smaller_offered=True)
    return chosen


# a market figure (the cheapest listings, new or used) is a current price like a used one
_CONDITION_ORDER = {"new": 0, "used": 1, "market": 1, "launch": 2}


# How much older than the card's newest used/market price a new price may be and still come
# first under "auto": one Amazon listing of June 2025 ($5,809 for an A40) is not what the card
# costs beside a market price of March 2026 ($4,150).
NEW_PRICE_LEAD_MONTHS = 6


def choose_purchase(offers: list[PurchaseOffer], basis: str = "auto") -> PurchaseOffer | None:
    """The price basis a purchase row uses: a new street price, else a used/market price,
    else the launch price (``basis`` "auto"), or only the named basis; the most recent of
    that basis, then the cheapest. Under "used", a current new price below the used one is
    paid instead (``_new_below``).

    Under "auto" a new price gives way to the card's newest used/market price when it is
    more than NEW_PRICE_LEAD_MONTHS older than that (``_outdated_by``): new is preferred
    among prices of about one time, not whatever its age; and to an as-current market price
    below it (``_market_below``)."""
    listed = offers
    if basis != "auto":
        # "used" asks for a second-hand price: the market's cheapest listings are mostly that
        took = (basis, "market") if basis == "used" else (basis,)
        offers = [o for o in offers if o.condition in took]
    else:
        offers = [o for o in offers if not o.stale]
        second_hand = [o.as_of for o in offers if o.second_hand]
        if second_hand:
            newest = max(second_hand, key=_earliest_day)
            offers = [
                o for o in offers if not (o.condition == "new" and _outdated_by(o.as_of, newest))
            ]
    if not offers:
        return None
    chosen = min(
        offers, key=lambda o: (_CONDITION_ORDER.get(o.condition, 9), _neg_date(o.as_of), o.usd)
    )
    if basis == "used":
        return _new_below(chosen, listed)
    return _market_below(chosen, offers) if basis == "auto" else chosen


def _market_below(new: PurchaseOffer, offers: list[PurchaseOffer]) -> PurchaseOffer:
    """Under "auto", the card's newest market price where it is below the new price and as
    current (not more than NEW_PRICE_LEAD_MONTHS older): a market figure is the cheapest
    listings of the card, new or used, so it is what a buyer pays, and a same-month "New on
    Amazon" figure above it is not (GPU Poet, September 2026: RTX 5090 $5,258 new beside
    $4,795 market). A used price does not stand in this way: a second-hand card is another
    good, which basis "used" asks for by name. The market price says which it beat."""
    if new.condition != "new":
        return new
    market = [o for o in offers if o.condition == "market"]
    if not market:
        return new
    best = min(market, key=lambda o: (_neg_date(o.as_of), o.usd))
    if best.usd >= new.usd or _outdated_by(best.as_of, new.as_of):
        return new
    why = f"below the new price (${new.usd:,.0f}, {new.as_of})"
    return dataclasses.replace(best, note=f"{why}; {best.note}" if best.note else why)


def _new_below(used: PurchaseOffer, offers: list[PurchaseOffer]) -> PurchaseOffer:
    """A second-hand price, or the card's new price where that is lower and current (not
    more than NEW_PRICE_LEAD_MONTHS older than the used one, as "auto" reads it): nobody
    pays a used asking price above what the card costs new (a lone $599.99 eBay listing of
    an RTX 4060 Ti 16GB beside its $449 new price). The new price says why it stands in."""
    new = [
        o
        for o in offers
        if o.condition == "new" and o.usd < used.usd and not _outdated_by(o.as_of, used.as_of)
    ]
    if not new:
        return used
    best = min(new, key=lambda o: (o.usd, _neg_date(o.as_of)))
    why = f"new: no used price below new; {used.condition}: ${used.usd:,.2f} on {used.as_of}"
    return dataclasses.replace(best, note=f"{why}; {best.note}" if best.note else why)


@dataclass(frozen=True, slots=True)
class BuyPrice:
    """What a card costs to buy as purchase basis "auto" prices it (``choose_purchase``), or,
    with no such price, the launch price too old to stand for one: the figure a page shows
    is the one a recommendation would use."""

    offer: PurchaseOffer | None
    stale_launch: PurchaseOffer | None = None


def buy_price(offers: Iterable[PurchaseOffer]) -> BuyPrice | None:
    """``BuyPrice`` of a card's purchase offers (None without any)."""
    listed = list(offers)
    if not listed:
        return None
    chosen = choose_purchase(listed)
    stale = None if chosen is not None else next((o for o in listed if o.stale), None)
    return BuyPrice(chosen, stale)


def _neg_date(as_of: str) -> tuple[int, ...]:
    return tuple(-int(p) for p in as_of.split("-") if p.isdigit())


def _earliest_day(as_of: str) -> tuple[int, int, int]:
    """The first day a date as a source gives it ("2026", "2026-03", "2026-03-09") can mean."""
    y, m, d = (([int(p) for p in as_of.split("-")[:3] if p.isdigit()] or [0]) + [1, 1])[:3]
    return y, m, d


def _outdated_by(new_as_of: str, newer_as_of: str) -> bool:
    """Whether a new price dated ``new_as_of`` is more than NEW_PRICE_LEAD_MONTHS older than
    ``newer_as_of``. Read in the new price's favour: a year or a month counts as its last day
    ("2025" as 2025-12-31), the other date as its first, so only a gap the dates prove
    demotes it."""
    parts = [int(p) for p in new_as_of.split("-")[:3] if p.isdigit()]
    if not parts:
        return False
    y, m, d = parts[0], parts[1] if len(parts) > 1 else 12, parts[2] if len(parts) > 2 else 31
    months = y * 12 + (m - 1) + NEW_PRICE_LEAD_MONTHS
    return (months // 12, months % 12 + 1, d) < _earliest_day(newer_as_of)


@dataclass(frozen=True, slots=True)
class Usage:
    """How much the user would use the hardware: the horizon of a buy-versus-rent verdict."""

    hours_per_week: float = 40.0
    years: float = 3.0
    resale_fraction: float = 0.0  # share of the purchase price recovered at the end
    electricity_usd_per_kwh: float = DEFAULT_ELECTRICITY_USD_PER_KWH
    # the horizon in hours, fixed with the figures above and read for every priced
    # configuration (~80 times an open question): a field set once, where a property was a
    # Python call at each read
    hours: float = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hours", self.hours_per_week * HOURS_PER_YEAR_WEEKS * self.years)


@dataclass(frozen=True, slots=True)
class Verdict:
    cheaper: str  # buy | rent
    break_even_hours: float | None  # hours of use at which buying starts to pay
    buy_total_usd: float  # purchase less resale, plus electricity over the usage
    rent_total_usd: float  # the chosen offer's hourly price over the usage
    hours: float
    # Under acquisition 'either', why the other way in is over the user's budget (Pricing
    # .left_out): ``cheaper`` then names the way the row offers, whatever the totals say.
    over_budget: str | None = None
    # what the totals leave out or assume past reason, in words (verdict_caveats)
    caveats: tuple[str, ...] = ()


# The rent side of the verdict is the offer's on-demand price. Providers sell 1- and 3-year
# commitments below it: AWS Savings Plans ("a term of 1 or 3 years", docs.aws.amazon.com/
# savingsplans) and Google Cloud committed use discounts, "up to 57% for most resources like
# machine types or GPUs" for 1 or 3 years (cloud.google.com/compute/docs/instances/
# signing-up-committed-use-discounts). A commitment bills every hour of its term, used or
# not, so at a discount d it costs less than on-demand once more than (1 - d) of the hours
# are used: at 57 %, 43 % of a week's 168 h, about 72 h a week, for a term of a year at least.
COMMITMENT_MAX_DISCOUNT = 0.57
COMMITMENT_MIN_YEARS = 1.0
COMMITMENT_HOURS_PER_WEEK = 168.0 * (1.0 - COMMITMENT_MAX_DISCOUNT)

# A resale fraction from which the verdict says it is above what used GPUs fetch: cards kept
# for years and sold at 80 % or more of their price would have lost almost nothing. A rule of
# thumb, not a market figure; for scale, the catalog's used RTX 3090 Ti ($1,399, 2026-08-11)
# lists at 71 % of its new price ($1,979, 2025-07-07), four years after its launch.
HIGH_RESALE_FRACTION = 0.8


def verdict(
    purchase_usd: float,
    energy_usd_per_hour: float | None,
    rent_usd_per_hour: float,
    usage: Usage,
    on_demand: bool = False,
) -> Verdict:
    """Buying against renting over the usage. ``on_demand``: the rent is an on-demand price
    (not spot, not a marketplace host's), which a commitment would lower."""
    energy = energy_usd_per_hour or 0.0
    net_purchase = purchase_usd * (1.0 - usage.resale_fraction)
    buy_total = net_purchase + energy * usage.hours
    rent_total = rent_usd_per_hour * usage.hours
    saving = rent_usd_per_hour - energy
    break_even = net_purchase / saving if saving > 0 else None
    return Verdict(
        cheaper="buy" if buy_total < rent_total else "rent",
        break_even_hours=break_even,
        buy_total_usd=buy_total,
        rent_total_usd=rent_total,
        hours=usage.hours,
        caveats=verdict_caveats(usage, on_demand),
    )


def verdict_caveats(usage: Usage, on_demand: bool) -> tuple[str, ...]:
    """What a buy-versus-rent verdict must say of its own terms: a rent at on-demand prices
    over usage heavy and long enough for a commitment to cost less (a lab running 24/7 for
    three years had been shown on-demand rent only), and a resale fraction above what used
    GPUs fetch (resale 1 had made buying cost its energy alone, with no word)."""
    said = [resale_caveat(usage.resale_fraction)]
    if (
        on_demand
        and usage.years >= COMMITMENT_MIN_YEARS
        and usage.hours_per_week >= COMMITMENT_HOURS_PER_WEEK
    ):
        said.append(
            f"the rent is the on-demand price: at {usage.hours_per_week:g} h a week for "
            f"{usage.years:g} year{'s' if usage.years != 1 else ''}, a 1- or 3-year commitment "
            f"(AWS Savings Plans; Google Cloud committed use, up to "
            f"{COMMITMENT_MAX_DISCOUNT:.0%} off GPUs) would cost less"
        )
    return tuple(x for x in said if x)


def resale_caveat(resale_fraction: float) -> str | None:
    """What a resale fraction from HIGH_RESALE_FRACTION up must say: used GPUs fetch less, and
    at 1 buying costs only its energy."""
    if resale_fraction < HIGH_RESALE_FRACTION:
        return None
    said = (
        f"a resale fraction of {resale_fraction:.0%} is more than used GPUs fetch after years "
        "of use (a used RTX 3090 Ti lists at 71% of a new one)"
    )
    if resale_fraction >= 1.0:
        said += ": buying then costs only its energy"
    return said


def break_even_said(hours: float) -> str:
    """The explanation's line on when buying starts to pay, after ``hours`` of use
    (CostEstimate.break_even_hours): a purchase resold whole had read "after about 0 hours"."""
    if hours <= 0:
        return (
            "Buying costs only its energy here (the resale returns the whole purchase), "
            "so it is cheaper than renting from the first hour."
        )
    if hours < 1:
        return "Buying beats renting within the first hour of use."
    return f"Buying beats renting after about {hours:,.0f} hours of use."


def usd_per_million_tokens(usd_per_hour: float | None, tokens_per_s: float | None) -> float | None:
    """What a million tokens cost at a steady rate on hardware billed by the hour."""
    if not usd_per_hour or not tokens_per_s or tokens_per_s <= 0:
        return None
    return usd_per_hour / (tokens_per_s * 3600.0) * 1e6


# ---------------------------------------------------------------- one configuration's prices


@dataclass(frozen=True, slots=True)
class GpuOffers:
    """Everything known about what one GPU costs; the service loads it once per request."""

    cloud: tuple[CloudOffer, ...] = ()
    purchase: tuple[PurchaseOffer, ...] = ()


@dataclass(frozen=True, slots=True)
class Pricing:
    """The two cost bases of one configuration, never mixed: renting a concrete offer, and
    buying the cards at a named price basis; the verdict when both exist."""

    rent: OfferChoice | None
    buy: PurchaseOffer | None
    num_gpus: int
    usage: Usage
    rent_reason: str | None = None  # why there is no rental (nothing that fits, filtered)
    buy_reason: str | None = None  # why there is no purchase price (the basis asked has none)
    # The GPU's prices seen elsewhere (CloudOffer.quoted), cheapest first: shown, not ranked.
    seen: tuple[CloudOffer, ...] = ()
    # Under acquisition 'either', the way in ("buy" | "rent") that is priced but over the
    # user's budget, and why in words: shown with its price, never offered, so the verdict
    # names the other (4 H100s at $116,800 had been called the cheaper way beside a $5,000
    # purchase budget).
    left_out: str | None = None
    left_out_why: str | None = None
    # GPUs the purchase pays for where that is more than num_gpus (0: num_gpus): a module sold
    # only as whole servers (PurchaseOffer.server_share) is bought a server at a time
    bought: int = 0
    # Whether either way in is priced, and the purchase of the cards paid for: fixed with the
    # fields above and read for every priced configuration (~140 times an open question),
    # so fields set once, where properties were a Python call at each read
    price_known: bool = field(init=False, compare=False, repr=False)
    purchase_usd: float | None = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "price_known", self.rent is not None or self.buy is not None)
        buy = self.buy
        paid = buy.usd * (self.bought or self.num_gpus) if buy is not None else None
        object.__setattr__(self, "purchase_usd", paid)

    def verdict(self, energy_usd_per_hour: float | None) -> Verdict | None:
        if self.rent is None or self.purchase_usd is None:
            return None
        # a rent left out over budget is no rent to commit to
        on_demand = (
            self.rent.offer.tier in ON_DEMAND_TIERS
            and not self.rent.spot
            and self.left_out != "rent"
        )
        v = verdict(
            self.purchase_usd,
            energy_usd_per_hour,
            self.rent.usd_per_hour,
            self.usage,
            on_demand,
        )
        if self.left_out is None:
            return v
        # the way over budget is no choice: the row's way is the cheaper one it can take, and
        # when buying would start to pay means nothing where one of the two is out
        kept = "rent" if self.left_out == "buy" else "buy"
        return dataclasses.replace(
            v, cheaper=kept, break_even_hours=None, over_budget=self.left_out_why
        )


class OfferBook(Mapping[str, GpuOffers]):
    """Every GPU's offers as of one snapshot (read-only, shared between requests), with the
    prices worked out from them: per rental policy, usage and purchase basis (by value), one
    table of ``(slug, count) -> Pricing``. Made with the snapshot and dropped with it, so a
    changed offer is priced afresh and an unchanged one once per policy."""

    __slots__ = ("_offers", "_tables")

    # Policies kept per snapshot (all dropped past it): a request names one, and most
    # requests the form's defaults; each table holds up to (cards × counts) prices.
    TABLES = 32

    def __init__(self, offers: Mapping[str, GpuOffers]) -> None:
        self._offers = dict(offers)
        self._tables: dict[
            tuple[RentalPolicy, Usage, str, HostNeed | None], dict[tuple[str, int], Pricing]
        ] = {}

    def __getitem__(self, slug: str) -> GpuOffers:
        return self._offers[slug]

    def __iter__(self) -> Iterator[str]:
        return iter(self._offers)

    def __len__(self) -> int:
        return len(self._offers)

    # the engine asks these per configuration: the dict's own, not Mapping's __getitem__ tries
    def __contains__(self, slug: object) -> bool:
        return slug in self._offers

    def get(self, slug: str, default: GpuOffers | None = None) -> GpuOffers | None:  # type: ignore[override]
        return self._offers.get(slug, default)

    def keys(self) -> KeysView[str]:
        """The dict's own view: a test of a slug in it is C, not ``__contains__``'s call
        (evaluate.price_columns asks it of every card)."""
        return self._offers.keys()

    def prices(
        self,
        policy: RentalPolicy,
        usage: Usage,
        purchase_basis: str,
        host: HostNeed | None = None,
    ) -> dict[tuple[str, int], Pricing]:
        """The table of prices under one policy, filled as configurations are priced
        (evaluate._offer_pricing): the same dict for every request with this policy and host
        RAM need (a job's weights decide which instances hold it)."""
        key = (policy, usage, purchase_basis, host)
        table = self._tables.get(key)
        if table is None:
            if len(self._tables) >= self.TABLES:
                self._tables.clear()  # a request holding a table keeps its own dict
            table = self._tables.setdefault(key, {})
        return table


def price_configuration(
    offers: GpuOffers,
    num_gpus: int,
    policy: RentalPolicy,
    usage: Usage,
    purchase_basis: str = "auto",
    node_gpus: int = 1,
    host: HostNeed | None = None,
) -> Pricing:
    """Both cost bases of ``num_gpus`` GPUs as one job (``choose_offer``); ``host``: the host
    RAM the job needs at the least, which a chosen instance must have where its catalog says."""
    n = max(1, num_gpus)
    cloud = list(offers.cloud)
    rent = choose_offer(cloud, n, policy, node_gpus, host)
    reason = None
    if rent is None:
        reason = _no_rent(offers)
        if host is not None and (held := choose_offer(cloud, n, policy, node_gpus)) is not None:
            # an instance holds the GPUs; host RAM is what refused every one of them
            per = min(held.offer.gpus, n)
            fit = [o for o in cloud if _accepts(o, policy) and o.gpus >= min(n, node_gpus)]
            reason = host_short_words(fit, host, per, min(n, node_gpus))
        elif (biggest := biggest_accepted(cloud, policy)) is not None:
            servers = node_gpus if policy.multi_node and biggest < node_gpus else None
            reason = instance_too_small(n, biggest, servers)
    return _priced(offers, rent, reason, n, usage, purchase_basis, node_gpus)


def whole_servers(buy: PurchaseOffer | None, n: int, node_gpus: int) -> int:
    """The GPUs a purchase of ``n`` pays for where the price is a server's share
    (``PurchaseOffer.server_share``: sold only as whole servers of ``node_gpus``): whole
    servers, more than ``n`` where ``n`` is not a multiple; 0 (``n`` itself) otherwise. One
    H100 SXM at a $317k 8-GPU server's price ÷ 8 had passed a $40k budget at $39,625."""
    if buy is None or node_gpus <= 1 or n % node_gpus == 0 or not buy.server_share:
        return 0
    return -(-n // node_gpus) * node_gpus


INSTANCE_CAP_WORDS = "one instance has at most"
# The exclusion codes of a configuration priced out before its roofline: no accepted offer or
# price, over a budget, more GPUs than one instance rents (evaluate, serving_step, the service)
PRICE_EXCLUSIONS = ("over_budget", "no_price", "instance_too_small")


def biggest_accepted(offers: Iterable[CloudOffer], policy: RentalPolicy) -> int | None:
    """The most GPUs one instance the policy accepts has; None where it accepts none."""
    return max((o.gpus for o in offers if _accepts(o, policy)), default=None)


def instance_too_small(n: int, biggest: int, node_gpus: int | None = None) -> str:
    """Why ``n`` GPUs have no rental though the card has offers: the largest accepted instance
    has ``biggest``, and one model over all of them needs them in one instance — or, for a job
    that spans servers (``node_gpus``: multi-node training), whole ``node_gpus``-GPU servers side
    by side, which no offer rents. Copies that share nothing are not held to one instance
    (``price_copies``, ``price_replicas``)."""
    if node_gpus is not None:
        return (
            f"{INSTANCE_CAP_WORDS} {biggest} of them, and a job over {n} GPUs spans whole "
            f"{node_gpus}-GPU servers side by side, which no offer rents"
        )
    return (
        f"{INSTANCE_CAP_WORDS} {biggest} of them, and one model over all {n} GPUs needs "
        "them in one instance"
    )


def price_copies(
    offers: GpuOffers,
    copies: int,
    policy: RentalPolicy,
    usage: Usage,
    purchase_basis: str = "auto",
    node_gpus: int = 1,
    host: HostNeed | None = None,
) -> Pricing:
    """Both cost bases of ``copies`` one-GPU copies that share nothing (offline inference over
    a dataset, each copy a process on its own shard): as many whole instances of one accepted
    offer as hold them, as serving replicas are booked (``choose_replica_offer``: no cluster
    network, so any tier, however many instances), and buying every GPU (whole servers of
    ``node_gpus`` where the price is a server's share: ``whole_servers``)."""
    n = max(1, copies)
    placed = choose_replica_offer(list(offers.cloud), 1, n, policy, host)
    rent = dataclasses.replace(placed.choice, copies=True) if placed is not None else None
    reason = None
    if rent is None:
        reason = _host_reason(offers, 1, n, policy, host) or _no_rent(offers)
    return _priced(offers, rent, reason, n, usage, purchase_basis, node_gpus)


def _host_reason(
    offers: GpuOffers, group: int, replicas: int, policy: RentalPolicy, host: HostNeed | None
) -> str | None:
    """Why no instance runs ``replicas`` groups of ``group`` GPUs where one would but for its
    host RAM (``host_short_words``); None where something else refuses them."""
    if host is None:
        return None
    cloud = list(offers.cloud)
    held = choose_replica_offer(cloud, group, replicas, policy)
    if held is None:
        return None
    biggest = held.choice.offer.gpus
    fit = [o for o in cloud if _accepts(o, policy) and o.gpus >= min(group, biggest)]
    return host_short_words(fit, host, min(held.per_instance * group, biggest), min(group, biggest))


def seen_prices(offers: GpuOffers) -> tuple[CloudOffer, ...]:
    """The GPU's quoted prices, cheapest per GPU first."""
    return tuple(sorted((o for o in offers.cloud if o.quoted), key=lambda o: o.usd_per_gpu_hour))


def _no_rent(offers: GpuOffers) -> str:
    """Why nothing is rented where no offer the policy accepts was chosen: none is known,
    none is bookable, or the bookable ones are all refused by the provider/tier choices."""
    if not offers.cloud:
        return "no cloud offer known"
    seen = seen_prices(offers)
    if len(seen) == len(offers.cloud):
        return f"no bookable cloud offer, only a price {seen[0].seen_text}"
    return "no cloud offer passes the provider/tier choices"


def _priced(
    offers: GpuOffers,
    rent: OfferChoice | None,
    reason: str | None,
    n: int,
    usage: Usage,
    purchase_basis: str,
    node_gpus: int,
) -> Pricing:
    """Both cost bases of ``n`` GPUs once the rental is chosen (``reason``: why there is none):
    the purchase at ``purchase_basis``, in whole servers where the price is a server's share."""
    buy, buy_reason = _purchase(offers, purchase_basis)
    return Pricing(
        rent, buy, n, usage, reason, buy_reason, seen_prices(offers),
        bought=whole_servers(buy, n, node_gpus),
    )  # fmt: skip


def _purchase(offers: GpuOffers, basis: str) -> tuple[PurchaseOffer | None, str | None]:
    """The purchase price at ``basis``, and why there is none when the GPU has prices of
    other kinds only."""
    buy = choose_purchase(list(offers.purchase), basis)
    if buy is None and offers.purchase:
        old = [o for o in offers.purchase if o.stale]
        if basis == "auto" and len(old) == len(offers.purchase):
            o = old[0]
            return None, (
                f"no current price: the only one known is the {o.as_of} launch price "
                f"(${o.usd:,.0f}), more than {LAUNCH_PRICE_YEARS} years old, and such a card "
                "sells used (purchase_basis 'launch' uses it anyway)"
            )
        return None, f"no {basis} price known (purchase price basis: {basis})"
    return buy, None


# ---------------------------------------------------------------- serving: replicas on instances


@dataclass(frozen=True, slots=True)
class ReplicaChoice:
    """Where the replicas of a serving configuration run: whole instances of one offer, each
    holding ``per_instance`` tensor-parallel groups of ``gpus_per_replica`` GPUs."""

    choice: OfferChoice
    gpus_per_replica: int
    replicas: int
    per_instance: int
    spans: int = 1  # instances one replica spans (pipeline stages across servers), else 1

    @property
    def note(self) -> str | None:
        c = self.choice
        shape = f"{c.instances}× " if c.instances > 1 else ""
        if self.spans > 1:
            return (
                f"rents {shape}{c.offer.instance_type} from {c.offer.provider} as one cluster: "
                f"each replica spans {self.spans} of them (pipeline stages across the "
                "provider's cluster network, tensor parallel inside each)"
            )
        if c.gpus_paid == c.gpus_used:
            if c.instances == 1:
                return None
            # replicas share nothing (a replica never spans instances): unlike a training job
            # over several servers, they need no cluster network, only a load balancer; said
            # here so the offer's own note (OfferChoice.note, a cluster booking) is not
            return (
                f"rents {shape}{c.offer.instance_type} side by side, each running whole "
                "replicas that share nothing: no cluster network needed, a load balancer "
                "spreads the requests"
            )
        tp = self.gpus_per_replica
        group = f"{tp} GPU{'s' if tp > 1 else ''}"
        return (
            f"pays for {shape}{c.offer.gpus}-GPU {c.offer.instance_type} ({c.gpus_paid} GPUs) "
            f"to use {c.gpus_used}: {self.replicas} replica{'s' if self.replicas > 1 else ''} "
            f"of {group}, at most {self.per_instance} per instance (a replica never spans "
            f"instances); room for {c.gpus_paid // tp - self.replicas} more at no extra cost"
        )


def choose_replica_offer(
    offers: list[CloudOffer],
    gpus_per_replica: int,
    replicas: int,
    policy: RentalPolicy = RentalPolicy(),
    host: HostNeed | None = None,
) -> ReplicaChoice | None:
    """The cheapest accepted way to run ``replicas`` copies of a ``gpus_per_replica``-GPU
    group on instance shapes that exist.

    A tensor-parallel group needs its GPUs in one instance (its all-reduces run every layer,
    over NVLink or PCIe, never between machines); a replica bigger than a server (pipeline
    stages across servers, serving_step.NODE_SPANS) takes whole servers of a cluster
    (``_spanned``). Replicas are independent servers, so several share an instance when it has
    room (⌊GPUs per instance ÷ group⌋ each) and further ones take further instances of the same
    offer. One instance type per configuration: the row names one offer. An instance whose
    listed host RAM is below ``host``'s need for the GPU processes it runs is not chosen
    (``choose_offer``). ``None`` when no accepted instance holds one group."""
    tp, r = max(1, gpus_per_replica), max(1, replicas)
    best: tuple[tuple[float, int, str, str], ReplicaChoice] | None = None
    for offer in offers:
        if offer.gpus <= 0 or not _accepts(offer, policy):
            continue
        if offer.gpus >= tp:
            per_instance, spans = offer.gpus // tp, 1
            instances = -(-r // per_instance)
        elif _spanned(offer, tp):
            per_instance, spans = 1, tp // offer.gpus
            instances = r * spans
        else:
            continue
        if _host_short(offer, host, min(per_instance, r) * min(tp, offer.gpus)):
            continue
        price, spot = _hourly_rate(offer, policy)
        choice = OfferChoice(offer, instances, tp * r, price * instances, spot)
        key = (choice.usd_per_hour, offer.gpus, offer.provider, offer.instance_type)
        if best is None or key < best[0]:
            best = (key, ReplicaChoice(choice, tp, r, min(per_instance, r), spans))
    return best[1] if best is not None else None


def _spanned(offer: CloudOffer, group: int) -> bool:
    """Whether a replica of ``group`` GPUs may span whole instances of ``offer``: full
    servers (topology.NODE_GPUS each) that divide it, booked from a provider's own instances
    (CLUSTER_TIERS), as a training job across nodes is."""
    return (
        offer.gpus >= topology.NODE_GPUS and group % offer.gpus == 0 and offer.tier in CLUSTER_TIERS
    )


def owned_usd_per_hour(
    purchase_usd: float, energy_usd_per_hour: float | None, usage: Usage
) -> float:
    """Owning the cards, per hour of use: the purchase less resale spread over the usage, plus
    electricity (the buy side of ``verdict`` divided by its hours)."""
    hours = max(usage.hours, 1.0)
    return purchase_usd * (1.0 - usage.resale_fraction) / hours + (energy_usd_per_hour or 0.0)


def price_replicas(
    offers: GpuOffers,
    gpus_per_replica: int,
    replicas: int,
    policy: RentalPolicy,
    usage: Usage,
    purchase_basis: str = "auto",
    node_gpus: int = 1,
    host: HostNeed | None = None,
) -> tuple[Pricing, ReplicaChoice | None]:
    """Both cost bases of one serving configuration: its replicas on rented instances, and
    buying every GPU it uses (whole servers of ``node_gpus`` where the price is a server's
    share: ``whole_servers``)."""
    n = max(1, gpus_per_replica) * max(1, replicas)
    placed = choose_replica_offer(list(offers.cloud), gpus_per_replica, replicas, policy, host)
    reason = None
    if placed is None:
        accepted = [o for o in offers.cloud if _accepts(o, policy)]
        short = _host_reason(offers, gpus_per_replica, replicas, policy, host)
        if short is not None:
            reason = short
        elif not accepted:
            reason = _no_rent(offers)
        else:
            biggest = max(o.gpus for o in accepted)
            reason = (
                f"no instance holds a {gpus_per_replica}-GPU tensor-parallel group "
                f"(largest accepted: {biggest})"
                if gpus_per_replica <= topology.NODE_GPUS
                else f"no provider's own {topology.NODE_GPUS}-GPU servers, booked as a "
                f"cluster, for a {gpus_per_replica}-GPU replica to span (largest accepted "
                f"instance: {biggest} GPUs)"
            )
    rent = placed.choice if placed is not None else None
    return _priced(offers, rent, reason, n, usage, purchase_basis, node_gpus), placed
