"""Money: purchase, rental, energy, cost to finish, and when buying beats renting.

Unknown prices stay ``None`` all the way through; nothing is ever priced at zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.gpu import GpuSpec

DEFAULT_ELECTRICITY_USD_PER_KWH = 0.15  # roughly the 2024 US average retail price
# A bought card is compared with renting over this many hours of use (3 years, 40 h a week):
# the horizon for "samples per dollar" when the objective mixes buying and renting.
AMORTISATION_HOURS = 3 * 52 * 40


@dataclass(frozen=True, slots=True)
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
    purchase_as_of: str | None = None
    hourly_as_of: str | None = None
    hourly_provider: str | None = None


def estimate_cost(
    gpu: GpuSpec,
    num_gpus: int,
    throughput: float,
    time_to_finish_h: float | None,
    electricity_usd_per_kwh: float | None = None,
) -> CostEstimate:
    n = max(1, num_gpus)
    kwh_price = (
        DEFAULT_ELECTRICITY_USD_PER_KWH
        if electricity_usd_per_kwh is None
        else electricity_usd_per_kwh
    )
    unit_buy, unit_rent = gpu.purchase_usd, gpu.hourly_usd
    purchase = unit_buy * n if unit_buy is not None else None
    hourly = unit_rent * n if unit_rent is not None else None
    # GPUs run near their board power under sustained training; inference sits lower, so TDP
    # is an upper bound the explanation calls so.
    power = gpu.tdp_w * n if gpu.tdp_w is not None else None
    energy_h = power / 1000.0 * kwh_price if power is not None else None

    rent_finish = energy_finish = buy_finish = None
    if time_to_finish_h is not None:
        if hourly is not None:
            rent_finish = hourly * time_to_finish_h
        if energy_h is not None:
            energy_finish = energy_h * time_to_finish_h
        if purchase is not None and energy_finish is not None:
            buy_finish = purchase + energy_finish

    break_even = None
    if purchase is not None and hourly is not None:
        saving = hourly - (energy_h or 0.0)
        break_even = purchase / saving if saving > 0 else None

    per_rent = throughput * 3600.0 / hourly if hourly else None
    per_buy = None
    if purchase:
        owned = purchase + (energy_h or 0.0) * AMORTISATION_HOURS
        per_buy = throughput * 3600.0 * AMORTISATION_HOURS / owned
    return CostEstimate(
        purchase_usd=purchase,
        hourly_usd=hourly,
        energy_usd_per_hour=energy_h,
        power_w=power,
        time_to_finish_h=time_to_finish_h,
        rent_to_finish_usd=rent_finish,
        energy_to_finish_usd=energy_finish,
        buy_to_finish_usd=buy_finish,
        break_even_hours=break_even,
        samples_per_usd_rent=per_rent,
        samples_per_usd_buy=per_buy,
        purchase_as_of=gpu.street_price.as_of if gpu.street_price is not None else None,
        hourly_as_of=gpu.cloud_price.as_of if gpu.cloud_price is not None else None,
        hourly_provider=gpu.cloud_price.provider if gpu.cloud_price is not None else None,
    )


def job_cost(cost: CostEstimate, acquisition: str) -> float | None:
    """What finishing the job costs under the chosen acquisition (the cheaper for 'either')."""
    options = []
    if acquisition in ("rent", "either") and cost.rent_to_finish_usd is not None:
        options.append(cost.rent_to_finish_usd)
    if acquisition in ("buy", "either") and cost.buy_to_finish_usd is not None:
        options.append(cost.buy_to_finish_usd)
    return min(options) if options else None


def value(cost: CostEstimate, acquisition: str) -> float | None:
    """Samples per dollar under the chosen acquisition (the better for 'either')."""
    options = []
    if acquisition in ("rent", "either") and cost.samples_per_usd_rent is not None:
        options.append(cost.samples_per_usd_rent)
    if acquisition in ("buy", "either") and cost.samples_per_usd_buy is not None:
        options.append(cost.samples_per_usd_buy)
    return max(options) if options else None


def upfront(cost: CostEstimate, acquisition: str) -> float | None:
    """Cheapest way in when there is no job length: purchase, or hourly × amortisation."""
    options = []
    if acquisition in ("buy", "either") and cost.purchase_usd is not None:
        options.append(cost.purchase_usd)
    if acquisition in ("rent", "either") and cost.hourly_usd is not None:
        options.append(cost.hourly_usd * AMORTISATION_HOURS)
    return min(options) if options else None
