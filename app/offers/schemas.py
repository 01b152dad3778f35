"""The offers contract: GET /api/v1/offers and the offers in GET /api/v1/gpus/{slug}."""

from __future__ import annotations

from pydantic import BaseModel, Field, computed_field, field_validator

from app.catalog.schemas import GpuOut
from app.vocab import Condition, OfferKind, Tier


class OfferOut(BaseModel):
    id: int = Field(
        description="the row's id in its own table (cloud or purchase): not unique across "
        "kinds, so a cloud offer and a purchase offer can share one; `key` is unique"
    )
    gpu: str = Field(description="catalog slug")
    kind: OfferKind
    provider: str | None = Field(None, description="cloud (SkyPilot's name where it has one)")
    instance_type: str | None = None
    gpus: int = Field(
        1,
        description="GPUs per instance (1 for a purchase): what `usd_per_hour` pays for, and "
        "what a recommendation's `num_gpus` counts in",
    )
    vcpus: float | None = Field(None, description="the instance's virtual CPUs (a count)")
    ram_gib: float | None = Field(
        None,
        description="the instance's host RAM in GiB (2^30 bytes), as its catalog lists it "
        "(SkyPilot's MemoryGiB)",
    )
    usd_per_hour: float | None = Field(
        None,
        description="on-demand price of the whole instance (all `gpus` GPUs), US dollars per "
        "hour; null for a purchase",
    )
    spot_usd_per_hour: float | None = Field(
        None,
        description="spot price of the whole instance, US dollars per hour; null where the "
        "provider lists none",
    )
    usd_per_gpu_hour: float | None = Field(
        None,
        description="on-demand price per GPU-hour in US dollars: `usd_per_hour` ÷ `gpus` "
        "(rounded to 4 decimals); what `rent_from.usd_per_gpu_hour` is the lowest of",
    )
    usd: float | None = Field(
        None, description="purchase price of one card in US dollars; null for a cloud offer"
    )
    condition: Condition | None = None
    tier: Tier | None = None
    regions: int | None = Field(None, description="how many regions offer it (a count)")
    as_of: str = Field(description="the date the price was seen: YYYY-MM-DD, or YYYY-MM")
    source: str = Field(
        description="where the price comes from, in words (a catalog file at a commit, a "
        "report's title and URL)"
    )
    stale: bool = Field(description="older than the server's offer_stale_days")
    origin: str
    inconsistent: bool = Field(
        False,
        description="the row's prices contradict each other (a spot price above its "
        "on-demand price): listed, but never ranked, used as a 'from' price or launched",
    )
    inconsistent_reason: str | None = Field(None, description="why, when inconsistent")
    launchable: bool = Field(
        False,
        description="cloud: an instance a provider's own catalog lists, with prices that agree "
        "(not `inconsistent`): what a recommendation may rent, rank and launch, and what "
        "`rent_from` is the lowest of. False for a quoted price (a per-GPU figure seen "
        "elsewhere: shown beside, never rented nor ranked on its own) and for every purchase",
    )

    # GET /api/v1/offers lists two tables, each numbering its own rows: id 1 was both an
    # Azure instance and a purchase price. The kind before the id tells them apart.
    @computed_field(  # type: ignore[prop-decorator]
        description="unique across GET /api/v1/offers and stable while the row is stored: "
        "'<kind>-<id>', e.g. 'cloud-1', 'purchase-1'"
    )
    @property
    def key(self) -> str:
        return f"{self.kind}-{self.id}"


class OfferPage(BaseModel):
    total: int = Field(description="items matching the filters, before limit and offset")
    limit: int = Field(description="the most items this page holds, as asked")
    offset: int = Field(description="items skipped before this page, as asked")
    stale_after_days: int = Field(
        description="the server's offer_stale_days: an offer whose `as_of` is more days old "
        "than this is `stale`"
    )
    items: list[OfferOut]


class SkippedOut(BaseModel):
    file: str
    instance_type: str
    accelerator: str | None
    reason: str


class ImportReport(BaseModel):
    files: list[str]
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[SkippedOut] = []


class RentFromOut(BaseModel):
    """What the GPU rents from: its launchable offers only, never a quoted price."""

    usd_per_gpu_hour: float | None = Field(
        description="lowest on-demand price in US dollars per GPU-hour among the launchable "
        "offers (the offer's `usd_per_gpu_hour`, to 4 decimals)"
    )
    provider: str | None = Field(description="who rents at that price")
    offers: int = Field(description="launchable offers, every tier")
    as_of: str = Field(description="the newest date among them")
    spot_usd_per_gpu_hour: float | None = Field(
        None,
        description="lowest spot price in US dollars per GPU-hour, only where it is lower",
    )
    instance_type: str | None = Field(
        None, description="the instance behind usd_per_gpu_hour (null when it is null)"
    )
    instance_gpus: int | None = Field(
        None,
        description="GPUs in that instance, all paid for: the per-GPU price is this share of "
        "the instance's price, not a 1-GPU rental",
    )
    tier: Tier | None = Field(
        None, description="that instance's tier (on-demand, marketplace, community)"
    )

    # The offer behind the price shows its per-GPU price to 4 decimals
    # (service.cloud_out): a 9-GPU instance at $1.4568/h read $0.1619 there and
    # $0.1618666666666667 here, one fact with two values to a client matching them.
    @field_validator("usd_per_gpu_hour", "spot_usd_per_gpu_hour")
    @classmethod
    def _as_offers_show_it(cls, value: float | None) -> float | None:
        return None if value is None else round(value, 4)


class BuyAtOut(BaseModel):
    """What one card costs to buy as a recommendation buys it (purchase basis "auto")."""

    usd: float | None = Field(
        description="one card in US dollars: a dated new price (unless more than six months "
        "older than a used/market one, or above a market one, the cheapest listings new or "
        "used, as current: `note` then names the new price), else a used one, else a launch "
        "price at most three years old; null when there is none (no current price)"
    )
    condition: Condition | None = Field(description="new | used | market | launch")
    as_of: str | None = None
    source: str | None = None
    stale: bool | None = Field(
        None,
        description="the price is older than the server's offer_stale_days, as an offer's "
        "`stale`; null without a price",
    )
    note: str | None = Field(
        None,
        description="the data's caveat on the price (e.g. one listing, not a market "
        "average); without a price, why there is none (a launch price more than three years "
        "old is not one)",
    )


class SeenElsewhereOut(BaseModel):
    """The catalog entry's quoted `cloud_price` as what it is: a rental price seen elsewhere
    (a note, a blog, a hobby repository), not an offer. Shown, never ranked, sorted on nor
    rented (issue 23); the price the GPU rents from is `rent_from`. The shape of a
    recommendation's `seen_prices` items."""

    provider: str | None = Field(description="where it was seen, as the source names it")
    usd_per_gpu_hour: float = Field(
        description="the quoted price, US dollars per GPU-hour (the entry's "
        "`cloud_price.usd_per_hour`)"
    )
    as_of: str
    source: str = Field(description="the source's title (the entry's `sources` item)")
    text: str = Field(description="seen at $x (source, date)")


class GpuListItem(GpuOut):
    """One GPU of GET /api/v1/gpus: the catalog entry with the two offer prices the list's
    filters and sorts read, as GET /api/v1/gpus/{slug} shows them."""

    rent_from: RentFromOut | None = Field(
        None,
        description="the offers' 'from' price (null without a launchable offer): what "
        "`max_hourly_usd` filters and `sort=rent_from.usd_per_gpu_hour` sorts on",
    )
    buy_at: BuyAtOut | None = Field(
        None,
        description="what a recommendation pays to buy one: what `max_price_usd` filters and "
        "`sort=buy_at.usd` sorts on",
    )
    seen_price: SeenElsewhereOut | None = Field(
        None,
        description="the entry's `cloud_price`, labelled as a price seen elsewhere (not "
        "bookable, never ranked): null where the entry quotes none",
    )


class GpuListPage(BaseModel):
    total: int = Field(description="items matching the filters, before limit and offset")
    limit: int = Field(description="the most items this page holds, as asked")
    offset: int = Field(description="items skipped before this page, as asked")
    items: list[GpuListItem]


class GpuWithOffers(GpuOut):
    """GET /api/v1/gpus/{slug}: the catalog entry and its offers."""

    offers: list[OfferOut] = Field(
        default_factory=list,
        description="what can be rented or bought: the providers' instances (a self-"
        "contradicting one listed, flagged `inconsistent`) and the purchase prices. The "
        "entry's quoted `cloud_price` is no offer: it is `seen_price`, beside them (GET "
        "/api/v1/offers still lists it, `launchable: false`)",
    )
    rent_from: RentFromOut | None = Field(
        None, description="the offers' from price; null without a launchable offer"
    )
    buy_at: BuyAtOut | None = Field(
        None,
        description="what a recommendation pays to buy one (unlike `purchase_usd`, the "
        "catalog's street-else-launch field, never a launch price more than three years "
        "old); null without any purchase price",
    )
    seen_price: SeenElsewhereOut | None = Field(
        None,
        description="the entry's `cloud_price`, labelled as a price seen elsewhere (not "
        "bookable, never ranked): null where the entry quotes none",
    )


class GpuCompareRow(BaseModel):
    gpu: GpuListItem
    ratios: dict[str, float | None] = Field(
        description="Each of `fields` divided by the first GPU's value; null when either is "
        "unknown. The prices are the offers' (`rent_from.usd_per_gpu_hour`, `buy_at.usd`), "
        "never the catalog's quoted `cloud_price`; `cloud_price_usd_per_hour` and `purchase_usd` "
        "are deprecated aliases of those two ratios (the keys before 2026-12-06), carrying the "
        "offers' prices too"
    )


class GpuCompareOut(BaseModel):
    baseline: str = Field(description="the first slug: every ratio's denominator")
    fields: list[str] = Field(
        description="the figures compared: numeric catalog fields, and the two offer prices "
        "each item shows, named as the GPU list sorts on them"
    )
    gpus: list[GpuCompareRow]
