"""Is there a Dask scheduler at this address? Asked once, with a deadline.

``distributed.Client`` waits forever on a port that accepts a connection and says nothing,
and reads whatever another server (an HTTP server, a dashboard) sends as a Dask frame
length: ``HTTP/1.1`` read as a length asks NumPy for 3.07 EiB.  Here one ``identity``
request goes out first, the whole exchange bounded by ``cluster.timeout`` in a thread of its
own; anything but a scheduler's answer in time is a config error naming the address.

The connection is tried once: ``distributed.comm.connect`` retries a refused connection until
its timeout, so a port where nothing listens would be reported, after the whole
``cluster.timeout``, as "no answer"; a refusal is final here, and said at once.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from pipeline.config import StudyError, seconds
from pipeline.exception_chain import raised_from
from solvers.kit.words import format_duration


class NotAScheduler(Exception):
    """Something answered at the address, but not as a Dask scheduler."""


class Refused(ConnectionRefusedError):
    """The connection to the address was refused: nothing listens there."""


def check_scheduler(address: str, timeout: float, security: Any = None) -> dict[str, Any]:
    """The scheduler's identity at ``address``; raises if none answers within ``timeout`` s
    (:class:`Refused` at once for a refused connection).

    Says on stderr, before it connects, "connecting to the scheduler at ADDRESS (waiting
    up to cluster.timeout=...)": a run asks once (``AddressBackend.find_workers``).
    """
    print(
        f"connecting to the scheduler at {address} (waiting up to cluster.timeout, "
        f"{format_duration(timeout)})",
        file=sys.stderr,
        flush=True,
    )
    import asyncio  # here, not at import: every backend module is imported to find the kinds

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
    """The reply to one ``identity`` request (the whole exchange within ``timeout`` s), over
    one connection attempt; :class:`Refused` at once if the connection is refused."""
    import asyncio

    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend

    args = security.get_connection_args("client") if security is not None else {}
    scheme, location = parse_address(address)
    connector = get_backend(scheme).get_connector()

    async def ask() -> Any:
        try:
            comm = await connector.connect(location, deserialize=True, **args)
        except OSError as exc:
            if raised_from(exc, ConnectionRefusedError) is not None:
                raise Refused(f"the connection to {location} was refused") from None
            raise
        try:  # Dask's handshake (as distributed.comm.connect does it), then the question
            comm.local_info = {**comm.handshake_info(), "address": comm.local_address}
            await comm.write(comm.local_info)
            comm.remote_info = {**await comm.read(), "address": comm.peer_address}
            comm.handshake_options = comm.handshake_configuration(comm.local_info, comm.remote_info)
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
    head = f"cluster.address={cluster.address!r}: cannot connect to a Dask scheduler there"
    if isinstance(exc, Refused):
        return f"{head}: {exc} (nothing listens on that port, or a firewall refuses); {hint}"
    if isinstance(exc, TimeoutError):
        return f"{head}: no answer within cluster.timeout={cluster.timeout!r}; {hint}"
    reason = _short_reason(exc)
    if not isinstance(exc, OSError | StudyError):
        reason = f"what answered is not the Dask protocol: {reason}"
    return f"{head} ({reason}); {hint}"


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
        raise StudyError(
            f"cluster.address={cluster.address!r}: the scheduler has no workers (none "
            f"joined within cluster.timeout={cluster.timeout!r}); start some with "
            f"`dask worker {cluster.address}`"
        ) from None
    return len(client.scheduler_info().get("workers", {})) or 1


class NoWorkersWatch:
    """The driver's watch on a scheduler's workers while it waits for its batches
    (``DaskExecutor.watch``, called about once a second).

    When every worker has left (stopped, killed, lost with its node), the scheduler keeps
    the run's tasks and waits for a worker, and the driver would wait with it, silently,
    for ever.  The watch says so at once, says how long it has waited (every 10 s the first minute,
    then every minute, then every 10 minutes past an hour), says when workers are back (the
    run goes on), and after ``cluster.timeout`` without any stops the run: StudyError
    (exit status 2), the rows stored so far intact.
    """

    def __init__(self, client: Any, cluster: Any, clock: Callable[[], float] = time.monotonic):
        self.client, self.cluster, self.clock = client, cluster, clock
        self.limit = seconds(cluster.timeout)
        self.since: float | None = None  # when the scheduler was first seen without workers
        self.mark = 0.0  # the next wait to report, in seconds

    def workers(self) -> int | None:
        """How many workers the scheduler has now (None: it did not answer)."""
        try:
            reply = self.client.sync(
                self.client.scheduler.identity, n_workers=0, callback_timeout=10
            )
        except Exception:  # noqa: BLE001 - whatever the reason, it did not answer
            return None
        return int(reply.get("n_workers", len(reply.get("workers", {}))))

    def __call__(self) -> None:
        n, now, address = self.workers(), self.clock(), self.cluster.address
        if n:
            if self.since is not None:
                _say(
                    f"{n} worker{'s' if n > 1 else ''} joined the scheduler at {address} after "
                    f"{_waited(now - self.since)} without any; the run goes on"
                )
                self.since = None
            return
        lost = n is None  # the scheduler itself does not answer
        if self.since is None:
            self.since, self.mark = now, _next_mark(0.0)
            _say(
                f"the scheduler at {address} does not answer; waiting up to cluster.timeout, "
                f"{format_duration(self.limit)}, for it"
                if lost
                else f"the scheduler at {address} has no workers left; waiting up to "
                f"cluster.timeout, {format_duration(self.limit)}, for a worker (start them with "
                f"`dask worker {address}`)"
            )
            return
        waited = now - self.since
        if waited >= self.limit:
            gone = "not answered" if lost else "had no workers"
            todo = (
                "is it running? Run the same command again once it is"
                if lost
                else f"start workers with `dask worker {address}` and run the same command again"
            )
            raise StudyError(
                f"cluster.address={address!r}: the scheduler has {gone} for {_waited(waited)} "
                f"(cluster.timeout={self.cluster.timeout!r}); the results stored so far are "
                f"intact: {todo} (stored tasks are skipped)"
            )
        if waited >= self.mark:
            while _next_mark(self.mark) <= waited:  # marks passed while the driver was busy
                self.mark = _next_mark(self.mark)
            what = (
                f"no answer from the scheduler at {address}" if lost else f"no worker at {address}"
            )
            _say(
                f"still {what} after {_waited(self.mark)}; the run stops after "
                f"{format_duration(self.limit)} without one (cluster.timeout)"
            )
            self.mark = _next_mark(self.mark)


def _next_mark(mark: float) -> float:
    """The wait to report after ``mark`` s: every 10 s to a minute, then every minute to
    an hour, then every 10 minutes."""
    return mark + (10.0 if mark < 60 else 60.0 if mark < 3600 else 600.0)


def _waited(seconds: float) -> str:
    """A wait as reported: whole seconds up to 2 min, then
    :func:`~solvers.kit.words.format_duration`."""
    return f"{seconds:.0f} s" if seconds < 120 else format_duration(seconds)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
