"""Is there a Dask scheduler at this address? Asked once, with a deadline (issue 26, item 2).

``distributed.Client`` waits forever on a port that accepts a connection and says nothing,
and reads whatever another server (an HTTP server, a dashboard) sends as a Dask frame
length: ``HTTP/1.1`` read as a length asked NumPy for 3.07 EiB.  Here one ``identity``
request goes out first, the whole exchange bounded by ``cluster.timeout`` in a thread of its
own; anything but a scheduler's answer in time is a config error naming the address.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from typing import Any

from pipeline.config import ConfigError, seconds


class NotAScheduler(Exception):
    """Something answered at the address, but not as a Dask scheduler."""


def check_scheduler(address: str, timeout: float, security: Any = None) -> dict[str, Any]:
    """The scheduler's identity at ``address``; raises if none answers within ``timeout`` s."""
    reply = _within(timeout, lambda: asyncio.run(_identity(address, timeout, security)))
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise NotAScheduler(f"it answers as {kind!r}, not as a Dask scheduler")
    return reply


def _within(timeout: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result, run in a daemon thread; TimeoutError if it takes over ``timeout``.

    A daemon thread: a call stuck on a silent socket must not keep the process alive.
    """
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            out["error"] = exc

    thread = threading.Thread(target=target, name="guesslab-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout:g} s")
    if "error" in out:
        raise out["error"]
    return out["value"]


async def _identity(address: str, timeout: float, security: Any) -> Any:
    """The reply to one ``identity`` request (the whole exchange within ``timeout`` s)."""
    from distributed.comm import connect

    args = security.get_connection_args("client") if security is not None else {}

    async def ask() -> Any:
        comm = await connect(address, timeout=timeout, **args)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        return await asyncio.wait_for(ask(), timeout)
    except TimeoutError:
        raise TimeoutError(f"no answer as a Dask scheduler within {timeout:g} s") from None


def connection_error(cluster: Any, exc: BaseException, tls: bool) -> str:
    """The one-line config error for a scheduler address that did not answer as one."""
    hint = (
        "is the scheduler running, and do cluster.tls.* come from the cluster's CA?"
        if tls
        else "is the scheduler running (dask scheduler), and is the address right?"
    )
    reason = _short_reason(exc)
    if not isinstance(exc, OSError | TimeoutError | ConfigError):
        reason = f"what answered is not the Dask protocol: {reason}"
    return (
        f"cluster.address={cluster.address!r}: cannot connect to a Dask scheduler there "
        f"within cluster.timeout={cluster.timeout!r} ({reason}); {hint}"
    )


def _short_reason(exc: BaseException, limit: int = 160) -> str:
    """``Type: message`` of an exception, cut to ``limit`` characters (sizes NumPy could not
    allocate, read from bytes that were never a Dask frame, left out)."""
    if isinstance(exc, MemoryError):
        return "MemoryError: it sent a frame length no Dask peer sends"
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def workers_present(client: Any, cluster: Any) -> int:
    """How many workers the scheduler has; waits up to cluster.timeout for the first one."""
    n = len(client.scheduler_info().get("workers", {}))
    if n:
        return n
    print(
        f"the scheduler at {cluster.address} has no workers yet; waiting up to "
        f"cluster.timeout={cluster.timeout} for one (start them with `dask worker "
        f"{cluster.address}`)",
        file=sys.stderr,
        flush=True,
    )
    try:
        client.wait_for_workers(1, timeout=seconds(cluster.timeout))
    except TimeoutError:
        raise ConfigError(
            f"cluster.address={cluster.address!r}: the scheduler has no workers (none "
            f"joined within cluster.timeout={cluster.timeout!r}); start some with "
            f"`dask worker {cluster.address}`"
        ) from None
    return len(client.scheduler_info().get("workers", {})) or 1
