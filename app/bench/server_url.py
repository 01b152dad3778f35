"""Whether a URL can be a GPU Advisor server's base address: the bench upload (``gpu-advisor
bench --upload``, ``upload --server``) and the launch-spec's upload line read the same rule."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

import httpx

# where a report is posted, under the server's base URL
UPLOAD_PATH = "/api/v1/device-reports"

# A host as a URL names it: a DNS name (IDNA letters allowed), IPv4, or IPv6 in brackets.
_HOST_NAME = re.compile(r"[\w-]+(\.[\w-]+)*\.?")


def base_url_problem(base_url: str) -> str | None:
    """Why ``base_url`` cannot be a server's base URL reports are posted under, or None. It is
    parsed as the upload will use it: urllib's split (which refuses an unclosed '[' or a port
    out of range), then httpx's URL of the upload path; it needs http:// or https://, a host
    name or IP address, and no ?query or #fragment (the upload path is appended to it).
    'http://[/]' had passed on httpx's lenient host ('%5B'), and the whole benchmark ran
    before the upload failed; 'http://host:99999' had passed the launch-spec's check."""
    if "://" not in base_url:
        return "it needs http:// or https://"
    try:
        parts = urlsplit(base_url)
        port = parts.port  # read lazily: an out-of-range or non-numeric port raises here
    except ValueError as exc:
        return f"it is not a URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "it needs http:// or https://"
    host = parts.hostname or ""
    if not host:
        return "it has no host"
    if not _is_ip(host) and not _HOST_NAME.fullmatch(host):
        return f"{host!r} is not a host name or IP address"
    if port == 0:
        return "port 0 is not a port a server listens on"
    if parts.query or parts.fragment or base_url.endswith(("?", "#")):
        return "it has a ?query or #fragment, which the upload path would land in"
    try:
        httpx.URL(base_url.rstrip("/") + UPLOAD_PATH)
    except Exception as exc:  # httpx.InvalidURL and the like
        return f"it is not a URL ({exc})"
    return None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# what a server answers before a benchmark is measured for it
HEALTH_PATH = "/api/v1/health"


def unreachable(base_url: str, timeout_s: float = 3.0) -> str | None:
    """Why the server at ``base_url`` does not answer now, or None where it does (any HTTP
    answer but a 404, which says the address is not a GPU Advisor server's base). Asked before
    a benchmark, which had found out only after minutes of measuring that nothing listened."""
    url = base_url.rstrip("/") + HEALTH_PATH
    try:
        status = httpx.get(url, timeout=timeout_s).status_code
    except httpx.TimeoutException:
        return f"{base_url} did not answer within {timeout_s:g} s"
    except httpx.HTTPError as exc:
        return f"cannot connect to {base_url}: {exc or type(exc).__name__}"
    if status == 404:
        return f"{url} answers 404: is {base_url} the server's base URL?"
    return None
