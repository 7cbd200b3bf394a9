"""Hostile conditions around the cluster (issue 26, items 2, 9 and 10): addresses that are not
a Dask scheduler, a scheduler without workers, other users on the same machine.

Every server here listens on 127.0.0.1 only; no test sends traffic to any other address.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests_support import cli, compose_config

from pipeline.run import run_study
from pipeline.study import StudyError

TIMEOUT_S = 2.0


def nothing_at_all(root: Path) -> bool:
    """No file (not even a lock file) and no folder under ``root``."""
    return not root.exists() or not any(root.iterdir())


def run(outputs: Path, *overrides: str):
    cfg = compose_config(f"paths.outputs={outputs}", "run.progress=false", *overrides)
    return run_study(cfg, log=lambda *_: None)


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
    """A port that says nothing hung forever; one that answers HTTP ("HTTP/1.1" read as a
    frame length) asked NumPy for 3.07 EiB: both are a config error naming the address."""
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
    """cluster.timeout=36500d was accepted, and a run waited 100 years in silence; like
    run.task_timeout_s, it is at most 30 days.  (The config check that every run makes
    first, before it connects: a hang, were the value accepted, is not a test.)"""
    from pipeline.run import preflight

    cfg = compose_config(*cfg_overrides(outputs, timeout))
    with pytest.raises(StudyError, match=f"cluster.timeout='{timeout}': ") as err:
        preflight(cfg)
    assert ("at most 30d" if timeout != "0s" else "above 0 s") in str(err.value)
    assert nothing_at_all(outputs)
    preflight(compose_config(*cfg_overrides(outputs, "30d")))  # the longest wait there is


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
    """These said "what answered is not the Dask protocol", although nothing was contacted."""
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

    from pipeline.backends import open_runner

    with open_runner({"kind": "local", "n_workers": 1}) as runner:
        scheduler = runner.client.scheduler.address
        workers = list(runner.client.scheduler_info()["workers"])
        assert scheduler.startswith("tls://127.0.0.1:") and workers
        for address in [scheduler, *workers]:
            assert address.startswith("tls://")
            assert _refused_without_credentials(address), address
        plain = scheduler.replace("tls://", "tcp://")
        with pytest.raises((OSError, TimeoutError)):
            Client(plain, timeout="3s")
        assert runner.client.submit(sum, [1, 2]).result() == 3  # its own client works


def test_tls_can_be_turned_off_and_that_warns():
    from pipeline.backends import exposure_warning

    assert exposure_warning({"kind": "local"}) is None
    warning = exposure_warning({"kind": "local", "tls": False})
    assert warning and "cluster.tls=false" in warning and "run code as you" in warning
