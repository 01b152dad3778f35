"""Whether `serve` can listen where it is asked, checked before it says it serves there."""

from __future__ import annotations

import socket


def cannot_listen(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, in words naming the flags, or None. uvicorn
    found out only after `serve` had printed "GPU Advisor on http://host:port" (another
    process's address, when the port was taken) and then logged "[Errno 98] Address already
    in use" as a JSON line, without the port under `--workers` > 1. The socket is bound as
    uvicorn's bind_socket binds it (IPv6 only for a host with ':', SO_REUSEADDR), so a port
    in TIME_WAIT still passes."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except socket.gaierror as exc:
        return f"--host {host}: cannot resolve it ({exc.strerror or exc})"
    except (OSError, UnicodeError) as exc:
        why = (getattr(exc, "strerror", None) or str(exc)).lower()
        return f"--host {host} --port {port}: cannot listen there: {why}"
    return None
