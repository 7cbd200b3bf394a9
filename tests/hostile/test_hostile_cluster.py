"""Hostile conditions around the cluster: addresses that are not
a Dask scheduler, a scheduler without workers, other users on the same machine.

Every server here listens on 127.0.0.1 only; no test sends traffic to any other address.
"""

from __future__ import annotations

import contextlib
import http.server
import logging
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.errors import StudyError
from pipeline.storage import store
from tests.helpers.commands import cli
from tests.helpers.dask_cluster import free_port
from tests.helpers.nap_driver import nap_overrides, register_nap
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config, run

TIMEOUT_S = 2.0


def nothing_at_all(root: Path) -> bool:
    """No file (not even a lock file) and no folder under ``root``."""
    return not root.exists() or not any(root.iterdir())


@contextlib.contextmanager
def loopback_server(answer: bytes | None) -> Iterator[str]:
    """A tcp://127.0.0.1:PORT that accepts connections and sends ``answer`` (None: nothing)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)
            if answer is not None:
                with contextlib.suppress(OSError):
                    conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """A plain HTTP server (like a dashboard port) on 127.0.0.1, as a tcp:// address."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


HTTP_REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"  # read as a Dask frame: 3.07 EiB


@pytest.mark.parametrize(
    "answer",
    [None, HTTP_REPLY, b"\xff" * 64, b"\x00" * 7],
    ids=["silent", "http-reply", "garbage", "short-garbage"],
)
def test_an_address_that_is_not_a_scheduler_fails_within_the_timeout(outputs, answer):
    """A port that says nothing, one that answers HTTP (its "HTTP/1.1" read as a frame
    length would ask NumPy for 3.07 EiB) or garbage: each is a config error naming the
    address, within the timeout."""
    import distributed  # noqa: F401 - imported before the clock starts

    with loopback_server(answer) as address:
        start = time.monotonic()
        with pytest.raises(StudyError, match=f"cluster.address='{address}'") as err:
            run(outputs, "cluster=address", f"cluster.address={address}", "cluster.timeout=2s")
        assert time.monotonic() - start < TIMEOUT_S + 1.5
    assert "cannot connect to a Dask scheduler" in str(err.value)
    assert nothing_at_all(outputs)


@contextlib.contextmanager
def never_connects() -> Iterator[str]:
    """A tcp://127.0.0.1:PORT where a connection never completes, as at an unroutable address:
    the listener's accept queue is full, so the kernel drops further connection requests."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield f"tcp://127.0.0.1:{port}"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_an_address_where_no_connection_completes_fails_within_the_timeout(outputs):
    import distributed  # noqa: F401 - imported before the clock starts

    with never_connects() as address:
        start = time.monotonic()
        with pytest.raises(StudyError, match=f"cluster.address='{address}'"):
            run(outputs, "cluster=address", f"cluster.address={address}", "cluster.timeout=2s")
        assert time.monotonic() - start < TIMEOUT_S + 1.5
    assert nothing_at_all(outputs)


@pytest.mark.slow
def test_a_plain_http_server_exits_2_with_one_line(tmp_path):
    with http_server() as address:
        res = cli(
            "cluster=address",
            f"cluster.address={address}",
            "cluster.timeout=2s",
            f"paths.outputs={tmp_path / 'out'}",
            cwd=tmp_path,
        )
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and "EiB" not in res.stderr
    assert f"error: cluster.address='{address}'" in res.stderr
    assert nothing_at_all(tmp_path / "out")


def cfg_overrides(outputs: Path, timeout: str) -> list[str]:
    address = "tcp://127.0.0.1:1"
    return [
        f"paths.outputs={outputs}",
        "cluster=address",
        f"cluster.address={address}",
        f"cluster.timeout={timeout}",
    ]


@pytest.mark.parametrize("timeout", ["36500d", "31d", "0s"])
def test_a_scheduler_timeout_out_of_bounds_is_refused(outputs, timeout):
    """cluster.timeout is above 0 s and at most 30 days, like run.task_timeout_s: a value
    outside is refused naming the key, nothing written.  (The config check that every run
    makes first, before it connects: a hang, were the value accepted, is not a test.)"""
    from pipeline.run import prepared

    cfg = compose_config(*cfg_overrides(outputs, timeout))
    with pytest.raises(StudyError, match=f"cluster.timeout='{timeout}': ") as err:
        prepared(cfg)
    assert ("at most 30d" if timeout != "0s" else "above 0 s") in str(err.value)
    assert nothing_at_all(outputs)
    prepared(compose_config(*cfg_overrides(outputs, "30d")))  # the longest wait there is


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("tcp://", "no host and port"),
        ("tcp://127.0.0.1:abc", "the port 'abc' is not a number from 1 to 65535"),
        ("tcp://127.0.0.1", "no port after '127.0.0.1'"),
        ("tcp://:8786", "no host before the port"),
        ("tls://127.0.0.1:70000", "the port '70000' is not a number"),
        ("tcp://::1:8786", "an IPv6 host goes in brackets"),
    ],
)
def test_a_malformed_address_is_said_to_be_malformed(outputs, address, problem):
    """A malformed cluster.address is said to be malformed, what is wrong with it and the
    HOST:PORT form, before anything is contacted or written."""
    from pipeline.config import cluster_config

    with pytest.raises(StudyError) as err:
        run(outputs, "cluster=address", f"cluster.address={address}")
    message = str(err.value)
    assert message.startswith(f"cluster.address='{address}': malformed address: ")
    assert problem in message, message
    assert "HOST:PORT" in message and "answered" not in message
    assert nothing_at_all(outputs)
    for good in ("tcp://127.0.0.1:8786", "tcp://[::1]:8786", "tls://node-1.example.org:1"):
        cluster_config({"kind": "address", "address": good})  # the check refuses no other


def test_a_refused_connection_is_said_at_once_as_refused(outputs, capsys):
    """A port where nothing listens is said to refuse the connection at once, not after the
    whole cluster.timeout that Dask's retries would take."""
    import distributed  # noqa: F401 - imported before the clock starts

    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    start = time.monotonic()
    with pytest.raises(StudyError, match=f"cluster.address='{address}'") as err:
        run(outputs, "cluster=address", f"cluster.address={address}", "cluster.timeout=60s")
    assert time.monotonic() - start < 30  # at once, not after cluster.timeout
    message = str(err.value)
    assert "was refused" in message and "no answer" not in message, message
    assert "what answered" not in message and "dask scheduler" in message
    said = capsys.readouterr().err
    assert f"connecting to the scheduler at {address} (waiting up to cluster.timeout, 60 s)" in said
    assert nothing_at_all(outputs)


@contextlib.contextmanager
def scheduler_with_threads() -> Iterator[Any]:
    """A Dask scheduler on tcp://127.0.0.1 with one single-thread worker, both in this
    process (so its worker knows the test family test_nap); the LocalCluster, to scale."""
    from distributed import LocalCluster

    register_nap()
    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as cluster:
        yield cluster


def n_workers(cluster: Any) -> int:
    return len(cluster.scheduler.workers)


def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def run_losing_workers(
    outputs: Path, n: int, timeout: str, back: Callable[[list[str]], bool]
) -> tuple[Any, list[str], bool]:
    """Run ``n`` naps of 0.3 s on a scheduler whose only worker leaves once the first batch is
    stored; a worker joins again once ``back(lines said)`` (or after 30 s, so that a driver
    that never gives up ends too).  (The report or the StudyError raised, the lines said,
    whether the worker joined after 30 s.)"""
    import pipeline.backends.probe

    said: list[str] = []
    results = outputs / "naps" / "results"
    with scheduler_with_threads() as cluster:

        def lose_and_maybe_return() -> None:
            wait_until(lambda: bool(store.result_files(results)), 60)
            cluster.scale(0)
            wait_until(lambda: n_workers(cluster) == 0, 30)
            if not wait_until(lambda: back(said) or finished.is_set(), 30):
                back_anyway.set()
            if not finished.is_set():
                cluster.scale(1)

        finished, back_anyway = threading.Event(), threading.Event()
        thread = threading.Thread(target=lose_and_maybe_return, daemon=True)
        overrides = [
            *nap_overrides(n, 0.3),
            "cluster=address",
            f"cluster.address={cluster.scheduler_address}",
            f"cluster.timeout={timeout}",
            "run.batch_size=1",
        ]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pipeline.backends.probe, "_say", said.append, raising=False)
            thread.start()
            try:
                outcome: Any = run(outputs, *overrides)
            except StudyError as exc:
                outcome = exc
            finally:
                finished.set()
                thread.join(60)
    return outcome, said, back_anyway.is_set()


def test_losing_every_worker_mid_run_is_said_and_stops_after_the_timeout(outputs):
    """A scheduler left with no worker mid-run: the driver says so and how long it waits,
    and stops (exit status 2) after cluster.timeout, the store intact."""
    outcome, said, _ = run_losing_workers(outputs, 30, "2s", back=lambda said: False)
    assert isinstance(outcome, StudyError), (outcome, said)
    address = str(outcome).split("'")[1]
    assert str(outcome).startswith(
        f"cluster.address='{address}': the scheduler has had no workers for 2 s "
        "(cluster.timeout='2s'); the results stored so far are intact"
    ), outcome
    assert f"dask worker {address}" in str(outcome)
    assert said[0] == (
        f"the scheduler at {address} has no workers left; waiting up to cluster.timeout, 2 s, "
        f"for a worker (start them with `dask worker {address}`)"
    ), said
    rows = store.load_results(outputs / "naps")
    assert 1 <= len(rows) < 30 and rows["task_id"].is_unique, rows
    assert (rows["status"] == "ok").all()  # the batches left waiting are not error rows


def test_a_worker_joining_again_is_said_and_the_run_goes_on(outputs, capsys):
    """A worker that joins while the driver waits takes the run's tasks; the driver says so,
    and says once that it is connecting, although it asks the scheduler twice."""

    def said_the_wait(said: list[str]) -> bool:
        return any("has no workers left" in line for line in said)

    outcome, said, timed_out = run_losing_workers(outputs, 12, "60s", back=said_the_wait)
    assert not timed_out, said
    assert (outcome.computed, outcome.errors) == (12, 0), said
    assert said[0].endswith(
        "has no workers left; waiting up to cluster.timeout, 60 s, for a worker (start them "
        f"with `dask worker {said[0].split()[3]}`)"
    ), said
    assert said[-1].startswith("1 worker joined the scheduler at "), said
    assert said[-1].endswith(" without any; the run goes on"), said
    rows = store.load_results(outputs / "naps")
    assert sorted(rows["woke"]) == list(range(12)) and rows["task_id"].is_unique
    assert capsys.readouterr().err.count("connecting to the scheduler at tcp://127.0.0.1:") == 1


def test_a_run_asks_the_scheduler_once(outputs, monkeypatch, capsys):
    """A run on cluster=address learns its workers' memory and count, then opens a client:
    one ``identity`` request to the scheduler in all, and one "connecting" line."""
    import pipeline.backends.probe as probe

    asked: list[str] = []
    real_identity = probe._identity

    async def counted(address: str, *args: Any) -> Any:
        asked.append(address)
        return await real_identity(address, *args)

    monkeypatch.setattr(probe, "_identity", counted)
    with scheduler_with_threads() as cluster:
        address = cluster.scheduler_address
        report = run(
            outputs, *nap_overrides(3, 0.0), "cluster=address", f"cluster.address={address}"
        )
    assert (report.computed, report.errors) == (3, 0)
    assert asked == [address]
    assert capsys.readouterr().err.count(f"connecting to the scheduler at {address}") == 1


class FakeClient:
    """What NoWorkersWatch asks of a Dask client: the scheduler's worker count."""

    def __init__(self) -> None:
        self.n: int | None = 0
        self.scheduler = type("Scheduler", (), {"identity": None})()

    def sync(self, *args: Any, **kwargs: Any) -> dict:
        if self.n is None:
            raise OSError("the scheduler is gone")
        return {"n_workers": self.n}


def test_the_wait_for_workers_is_said_every_10_s_then_every_minute(capsys):
    """How long the driver has waited without workers is said every 10 s the first minute,
    then every minute, then every 10 minutes; after cluster.timeout the run stops."""
    from pipeline.backends.probe import NoWorkersWatch

    now = [0.0]
    cluster = type("Cluster", (), {"address": "tcp://10.0.0.1:8786", "timeout": "2h"})()
    client = FakeClient()
    watch = NoWorkersWatch(client, cluster, clock=lambda: now[0])
    while now[0] < 7200:  # called once a second, as the driver does while it waits
        watch()
        now[0] += 1.0
    first, *lines = capsys.readouterr().err.splitlines()
    assert first.startswith("the scheduler at tcp://10.0.0.1:8786 has no workers left;")
    assert all(
        line.endswith("; the run stops after 2 h without one (cluster.timeout)") for line in lines
    )
    waits = [line.split(" after ")[1].split(";")[0] for line in lines]
    assert waits[:8] == ["10 s", "20 s", "30 s", "40 s", "50 s", "60 s", "2 min", "3 min"]
    assert waits[-5:] == ["70 min", "80 min", "90 min", "100 min", "110 min"], waits
    assert len(waits) == 6 + 59 + 5, waits
    with pytest.raises(StudyError, match=r"has had no workers for 2 h \(cluster.timeout='2h'\)"):
        watch()  # 7200 s without a worker
    client.n = None  # a scheduler that does not answer is waited for too
    now[0] = 0.0
    watch = NoWorkersWatch(client, cluster, clock=lambda: now[0])
    watch()
    now[0] = 10.0
    watch()
    client.n = 2
    now[0] = 42.0
    watch()
    assert capsys.readouterr().err.splitlines() == [
        "the scheduler at tcp://10.0.0.1:8786 does not answer; waiting up to cluster.timeout, "
        "2 h, for it",
        "still no answer from the scheduler at tcp://10.0.0.1:8786 after 10 s; the run stops "
        "after 2 h without one (cluster.timeout)",
        "2 workers joined the scheduler at tcp://10.0.0.1:8786 after 42 s without any; "
        "the run goes on",
    ]


# ------------------------------------------------- item 10: other users on the same machine


def _refused_without_credentials(address: str) -> bool:
    """Whether a TLS handshake without a client certificate to ``address`` is refused."""
    import ssl

    host, port = address.split("://", 1)[1].rsplit(":", 1)
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # a stranger trusts anything; it has no certificate
    try:
        with (
            socket.create_connection((host, int(port)), timeout=10) as raw,
            ctx.wrap_socket(raw, server_hostname=host) as tls,
        ):
            tls.sendall(b"\x00" * 8)
            return tls.recv(1) == b""  # TLS 1.3 reports the refusal on the first read
    except (ssl.SSLError, ConnectionError):
        return True


@pytest.mark.slow
def test_the_local_cluster_refuses_a_process_without_its_credentials():
    """Loopback is no boundary on a shared machine: the embedded LocalCluster uses TLS with
    throw-away credentials, so a connection without them is refused, at every port."""
    from distributed import Client

    from pipeline.backends import open_executor

    with open_executor({"kind": "local", "n_workers": 1}) as executor:
        scheduler = executor.client.scheduler.address
        workers = list(executor.client.scheduler_info()["workers"])
        assert scheduler.startswith("tls://127.0.0.1:") and workers
        for address in [scheduler, *workers]:
            assert address.startswith("tls://")
            assert _refused_without_credentials(address), address
        plain = scheduler.replace("tls://", "tcp://")
        with pytest.raises((OSError, TimeoutError)):
            Client(plain, timeout="3s")
        assert executor.client.submit(sum, [1, 2]).result() == 3  # its own client works


def test_tls_can_be_turned_off_and_that_warns():
    from pipeline.backends import backend_of
    from pipeline.config import cluster_config

    assert backend_of(cluster_config({"kind": "local"})).exposure_warning() is None
    warning = backend_of(cluster_config({"kind": "local", "tls": False})).exposure_warning()
    assert warning and "cluster.tls=false" in warning and "run code as you" in warning


def _cluster_ports(pid: int) -> list[int]:
    """The ports the process ``pid`` and its children listen on."""
    import psutil

    driver = psutil.Process(pid)
    pids = {pid} | {child.pid for child in driver.children(recursive=True)}
    return sorted(
        {
            conn.laddr.port
            for conn in psutil.net_connections(kind="inet")
            if conn.status == psutil.CONN_LISTEN and conn.pid in pids
        }
    )


NAP_DRIVER = ROOT / "tests" / "helpers" / "nap_driver.py"


@pytest.mark.slow
def test_refused_connections_are_counted_said_once_and_kept_in_the_run_log(outputs):
    """Connections the TLS LocalCluster refuses (20 strangers' here) print nothing into the
    run's output as they come (any account on the machine could flood it): one line at the
    end counts them, and the run's log holds what Dask and Tornado said of each."""
    import sys

    command = [
        sys.executable,
        str(NAP_DRIVER),
        "8",
        "0.5",
        "cluster=local",
        "cluster.n_workers=1",
        "run.batch_size=1",
        "run.progress=false",
        f"paths.outputs={outputs}",
    ]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        runs = outputs / "naps" / "runs"
        assert wait_until(lambda: any(runs.glob("*.yaml")), 120), driver.poll()
        ports = _cluster_ports(driver.pid)  # scheduler, nanny, worker
        assert len(ports) == 3, ports  # the naps have no estimate: the cluster started first
        for n in range(20):
            assert _refused_without_credentials(f"tls://127.0.0.1:{ports[n % 3]}")
        out, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode == 0, out + err
    assert "SSL" not in out + err and "handshake" not in out + err, out + err
    (record,) = runs.glob("*.yaml")
    log = record.with_suffix(".log")
    assert err.splitlines() == [
        "warning: the LocalCluster refused 20 connections without this run's TLS "
        "certificate (another process on this machine connected to its ports); what Dask "
        f"and Tornado logged of each is in {log}"
    ], err
    kept = log.read_text().splitlines()
    assert sum("TLS handshake failed with remote" in line for line in kept) == 20, kept
    assert sum(line.split()[1] == "tornado.general:" for line in kept) == 20, kept
    assert kept == sorted(kept)  # one account of every process, in time order


class Collected(logging.Handler):
    """Every record that reaches a handler."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_refused_connections_to_spawned_workers_are_counted_too(capsys):
    """The scheduler and the nannies listen in the driver, the workers in their own
    processes (forked, or here spawned): every refusal is counted, none reaches a handler."""
    from pipeline.backends import open_executor

    collected = Collected()
    loggers = [logging.getLogger(name) for name in ("", "distributed", "tornado")]
    for logger in loggers:
        logger.addHandler(collected)
    try:
        with open_executor({"kind": "local", "n_workers": 1, "start_method": "spawn"}) as executor:
            ((worker, info),) = executor.client.scheduler_info()["workers"].items()
            addresses = [executor.client.scheduler.address, info["nanny"], worker]
            for address in addresses * 2:
                assert _refused_without_credentials(address), address
            assert executor.client.submit(sum, [1, 2]).result() == 3
    finally:
        for logger in loggers:
            logger.removeHandler(collected)
    texts = [r.getMessage() for r in collected.records]
    assert not [t for t in texts if "SSL Error" in t or "handshake failed" in t], texts
    assert capsys.readouterr().err.splitlines() == [
        "warning: the LocalCluster refused 6 connections without this run's TLS certificate "
        "(another process on this machine connected to its ports); their log lines were not "
        "kept (the cluster was opened outside a run)"
    ]
