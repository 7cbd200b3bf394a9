"""Security: loopback-only local clusters, TLS clusters, warnings, nothing secret stored."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from omegaconf import OmegaConf

from pipeline.backends import backend_of, open_executor
from pipeline.certs import write_cluster_certs
from pipeline.config import cluster_config
from pipeline.errors import StudyError
from pipeline.run import run_study
from pipeline.storage import store
from tests.helpers.dask_cluster import free_port, stop
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config

DASK = str(Path(sys.executable).parent / "dask")


def warning_of(cluster: dict) -> str | None:
    """The backend's warning for a cluster section about who else can reach the cluster."""
    return backend_of(cluster_config(cluster)).exposure_warning()


def _listening(pids: set[int]) -> list[tuple[str, int]]:
    out = []
    for conn in psutil.net_connections(kind="inet"):
        if conn.status == psutil.CONN_LISTEN and conn.pid in pids:
            out.append((conn.laddr.ip, conn.laddr.port))
    return out


def test_the_embedded_local_cluster_listens_on_loopback_only():
    cluster = {"kind": "local", "n_workers": 2, "threads_per_worker": 1, "dashboard": True}
    with open_executor(cluster) as executor:
        worker_pids = set(executor.client.run(os.getpid).values())  # the cluster started
        me = psutil.Process()
        pids = {me.pid} | {p.pid for p in me.children(recursive=True)}
        sockets = _listening(pids)
        assert worker_pids <= pids
        assert executor.client.scheduler.address.startswith("tls://127.0.0.1:")  # TLS by default
        assert executor.client.dashboard_link.startswith("http://127.0.0.1:")
    assert len(sockets) >= 4  # scheduler, its HTTP server, two workers (and nannies)
    assert {ip for ip, _ in sockets} == {"127.0.0.1"}, sockets


def _spread_from_a_task(spreading) -> tuple[int, str, int]:
    """Where a task that spreads its work, run as the pipeline runs it, runs (its process),
    where it spreads its pieces (in words), and a piece's result."""
    from pipeline.long_task_setup import LongTaskSetup

    setup = LongTaskSetup(None, 2, None, progress=False)
    with setup.context("t", spreading).spread(2) as spread:
        return os.getpid(), spread.description, spread.gather(spread.submit(pow, 3, 2))


def test_a_task_spreads_over_its_run_s_cluster_with_the_run_s_tls():
    """A task that spreads its work on a worker of the embedded LocalCluster reaches that
    cluster through the worker's own client: over TLS on loopback, as the run's own client
    does, and never through a cluster of its own."""
    cluster = {"kind": "local", "n_workers": 2, "threads_per_worker": 1, "start_after_s": 0}
    with open_executor(cluster) as executor:
        executor.submit(_spread_from_a_task, executor.spreading)
        (call,) = list(executor.completed())
        assert call.lost is None
        pid, where, value = call.result
        scheduler = executor.client.scheduler.address
    assert pid != os.getpid()  # on a worker
    assert value == 9 and scheduler.startswith("tls://127.0.0.1:")
    assert where == f"the 2 workers of the Dask scheduler at {scheduler}"


def _answer(port: int) -> bytes:
    """The first bytes a loopback port answers to a plain HTTP request (b"" if none)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.settimeout(3)
        conn.sendall(b"GET /info/main/workers.html HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        try:
            return conn.recv(64)
        except (TimeoutError, ConnectionError):
            return b""


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_without_the_dashboard_nothing_serves_http(start_method):
    """Dask serves plain HTTP (workers, task names, call stacks, logs) from the scheduler
    and every worker even with the dashboard off; the default LocalCluster serves none."""
    with open_executor({"kind": "local", "n_workers": 2, "start_method": start_method}) as executor:
        executor.expect(None, 1)  # the cluster started now
        me = psutil.Process()
        pids = {me.pid} | {p.pid for p in me.children(recursive=True)}
        sockets = _listening(pids)
        answers = {port: _answer(port) for _, port in sockets}
        servers = executor.client.run_on_scheduler(
            lambda dask_scheduler: (
                dask_scheduler.http_server._stopped,
                dict(dask_scheduler.services),
            )
        )
        workers = executor.client.run(lambda dask_worker: dask_worker.http_server._stopped)
    assert len(sockets) == 5, sockets  # the scheduler, two workers, two nannies: no HTTP
    assert not [port for port, text in answers.items() if text.startswith(b"HTTP/")], answers
    assert servers == (True, {}) and all(workers.values()), (servers, workers)


def test_with_the_dashboard_its_http_server_stays():
    with open_executor({"kind": "local", "n_workers": 1, "dashboard": True}) as executor:
        port = int(executor.client.dashboard_link.split(":")[2].split("/")[0])
        assert _answer(port).startswith(b"HTTP/1.1 ")


# A 1-worker LocalCluster with the dashboard, sent requests for pages that do not exist at
# the scheduler's and the worker's HTTP ports; prints nothing itself.
DASHBOARD_PROBE = """
import urllib.error, urllib.request
from pipeline.backends import open_executor

def status(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code

with open_executor({"kind": "local", "n_workers": 1, "dashboard": True}) as executor:
    base = executor.client.dashboard_link.rsplit("/", 1)[0]
    (worker,) = executor.client.scheduler_info()["workers"].values()
    at_worker = f"http://127.0.0.1:{worker['services']['dashboard']}"
    answers = {status(f"{url}/no-such-page-{i}") for i in range(5) for url in (base, at_worker)}
    assert answers == {404}, answers
"""


def test_the_dashboard_keeps_its_access_log_off_the_output():
    """Requests any account sends to the dashboard's HTTP servers (the scheduler's, in the
    driver, and a forked worker's, on 127.0.0.1) leave no line in the output; without bokeh
    (or with one too old) one line says the dashboard needs it, and how to install it."""
    from importlib.metadata import PackageNotFoundError, version

    from distributed.versions import BOKEH_REQUIREMENT

    res = subprocess.run(
        [sys.executable, "-c", DASHBOARD_PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    try:
        have = BOKEH_REQUIREMENT.specifier.contains(version("bokeh"), prereleases=True)
    except PackageNotFoundError:
        have = False
    lines = res.stderr.splitlines()
    needs = (
        f"warning: cluster.dashboard=true: Dask's dashboard needs {BOKEH_REQUIREMENT}, which "
        f"is not installed here (its pages say only that): pip install '{BOKEH_REQUIREMENT}', "
        "or drop the override"
    )
    assert lines == ([] if have else [needs]), res.stderr


@pytest.mark.parametrize(
    ("installed", "said"),
    [
        (None, "Dask's dashboard needs bokeh>=3.1.0, which is not installed here (its pages"),
        ("2.4.3", "Dask's dashboard needs bokeh>=3.1.0, and bokeh 2.4.3 is installed here"),
        ("3.4.0", None),
    ],
)
def test_the_dashboard_without_bokeh_is_said_in_one_line(monkeypatch, installed, said):
    import importlib.metadata

    from pipeline.backends.local import dashboard_warning

    def version(name):
        if installed is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed

    monkeypatch.setattr(importlib.metadata, "version", version)
    on, off = (cluster_config({"kind": "local", "dashboard": d}) for d in (True, False))
    warning = dashboard_warning(on)
    assert dashboard_warning(off) is None
    if said is None:
        assert warning is None
    else:
        assert warning.startswith(f"cluster.dashboard=true: {said}"), warning
        assert warning.endswith(": pip install 'bokeh>=3.1.0', or drop the override"), warning


def _logs_and_waits(go: str) -> str:
    """A task that logs a line (as a solver's warning would) and waits for ``go``."""
    import logging

    from distributed import Event

    logging.getLogger("distributed.worker").warning("the log line of a task: deck=[3, 3, 3]")
    Event(go).wait(timeout=60)
    return "done"


def _page(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def test_the_dashboard_warning_names_the_logs_and_call_stacks_it_serves():
    """The dashboard's warning names all it serves to every account: task names and
    progress, the workers' logs and the call stacks of running tasks."""
    from urllib.parse import quote

    from distributed import Event

    warning = warning_of({"kind": "local", "dashboard": True})
    with open_executor({"kind": "local", "n_workers": 1, "dashboard": True}) as executor:
        client = executor.client
        task = client.submit(_logs_and_waits, "go", key="a-task-name")
        base = client.dashboard_link.rsplit("/", 1)[0]
        (worker,) = client.scheduler_info()["workers"]
        stacks = f"{base}/info/call-stacks/{quote(worker, safe='')}.html"
        deadline = time.monotonic() + 60
        while "_logs_and_waits" not in _page(stacks) and time.monotonic() < deadline:
            time.sleep(0.1)
        logs = _page(f"{base}/info/logs/{quote(worker, safe='')}.html")
        stack = _page(stacks)
        Event("go", client=client).set()
        assert task.result() == "done"
    assert "the log line of a task: deck=[3, 3, 3]" in logs
    assert "_logs_and_waits" in stack and "a-task-name" in stack
    assert warning is not None and "not results" not in warning
    for served in ("task names", "logs", "call stacks of running tasks", "source lines"):
        assert served in warning, served


def test_the_embedded_cluster_refuses_clients_without_its_throwaway_certificate():
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from distributed import Client

    from pipeline.backends.local import throwaway_security

    cluster = {"kind": "local", "n_workers": 1, "threads_per_worker": 1}
    with open_executor(cluster) as executor:
        address = executor.client.scheduler.address
        host, port = address.removeprefix("tls://").rsplit(":", 1)
        assert executor.client.submit(sum, [1, 2]).result() == 3
        stranger = throwaway_security()  # a certificate of another (throwaway) CA
        cert = x509.load_pem_x509_certificate(stranger.tls_client_cert.encode())
        assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
        with pytest.raises((OSError, TimeoutError)):
            Client(address, security=stranger, timeout="3s")
        ctx = ssl.create_default_context()  # no certificate at all
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        with (
            socket.create_connection((host, int(port)), timeout=10) as raw,
            pytest.raises((ssl.SSLError, ConnectionError)),
            ctx.wrap_socket(raw) as tls,
        ):
            tls.sendall(b"hello")
            if tls.recv(1) == b"":  # TLS 1.3 reports the refusal on the first read
                raise ConnectionError("closed by the scheduler")


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """A TLS scheduler and two TLS workers on 127.0.0.1, as subprocesses."""
    certs = write_cluster_certs(tmp_path_factory.mktemp("certs"), ["127.0.0.1", "localhost"])
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    tls = ["--tls-ca-file", str(certs["ca"])]
    procs = [
        subprocess.Popen(
            [
                DASK,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--protocol",
                "tls",
                "--dashboard-address",
                "127.0.0.1:0",
                *tls,
                "--tls-cert",
                str(certs["scheduler"]),
                "--tls-key",
                str(certs["scheduler_key"]),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    for _ in range(2):
        procs.append(
            subprocess.Popen(
                [
                    DASK,
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                    *tls,
                    "--tls-cert",
                    str(certs["worker"]),
                    "--tls-key",
                    str(certs["worker_key"]),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    _wait_for_workers(address, certs, 2)
    yield address, certs
    stop(procs)


def _wait_for_workers(address, certs, n):
    from distributed import Client
    from distributed.security import Security

    sec = Security(
        tls_ca_file=str(certs["ca"]),
        tls_client_cert=str(certs["client"]),
        tls_client_key=str(certs["client_key"]),
        require_encryption=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            with Client(address, security=sec, timeout="5s") as client:
                client.wait_for_workers(n, timeout=30)
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _tls_overrides(address, certs, role="client"):
    return [
        "cluster=address",
        f"cluster.address={address}",
        f"cluster.tls.ca_file={certs['ca']}",
        f"cluster.tls.cert={certs[role]}",
        f"cluster.tls.key={certs[f'{role}_key']}",
        "cluster.timeout=5s",
    ]


@pytest.mark.slow
def test_a_study_runs_on_a_tls_cluster_and_stores_no_secret(tls_cluster, tmp_path):
    address, certs = tls_cluster
    cfg = compose_config(
        f"paths.outputs={tmp_path}", "run.progress=false", *_tls_overrides(address, certs)
    )
    report = run_study(cfg, log=lambda *_: None)
    assert (report.computed, report.errors) == (2, 0)
    rows = store.load_results(tmp_path / "paper")
    assert sorted(rows["expected_score_exact"]) == ["2383/560", "475/112"]
    secrets = [Path(certs[k]).read_bytes().strip() for k in ("client_key", "ca_key")]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"PRIVATE KEY" not in data, path
            assert not any(s in data for s in secrets), path
            # the study's lock and claim files are the owner's only; the rest follow the umask
            owner_only = path.name in (".lock", ".running") or path.parent.name == ".claims"
            mode = 0o600 if owner_only else 0o666 & ~_umask()
            assert path.stat().st_mode & 0o777 == mode, path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.slow
def test_a_certificate_from_another_ca_is_refused_with_exit_2(tls_cluster, tmp_path):
    address, _ = tls_cluster
    strangers = write_cluster_certs(tmp_path / "other-ca", ["127.0.0.1"])
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            f"paths.outputs={tmp_path / 'out'}",
            *_tls_overrides(address, strangers),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert res.returncode == 2, res.stderr
    assert "cluster.address" in res.stderr and "cannot connect" in res.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.parquet"))


@pytest.mark.slow
def test_a_client_without_a_certificate_is_refused(tls_cluster):
    import ssl

    address, certs = tls_cluster
    host, port = address[len("tls://") :].rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=str(certs["ca"]))  # trusts the CA, shows no cert
    with (
        socket.create_connection((host, int(port)), timeout=10) as raw,
        pytest.raises((ssl.SSLError, ConnectionError)),
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        tls.sendall(b"hello")
        if tls.recv(1) == b"":  # TLS 1.3 reports the refusal on the first read
            raise ConnectionError("closed by the scheduler")
    cfg = OmegaConf.to_container(compose_config("cluster=address", f"cluster.address={address}"))
    with pytest.raises(StudyError, match="cluster.tls.ca_file=None: a tls:// cluster needs"):
        run_study(cfg, log=lambda *_: None)


def test_tls_settings_are_checked_before_any_work(tmp_path):
    base = ["cluster=address", "cluster.address=tls://127.0.0.1:1"]
    cfg = compose_config(
        *base,
        "cluster.tls.ca_file=/nonexistent/ca.pem",
        "cluster.tls.cert=/x",
        "cluster.tls.key=/y",
        f"paths.outputs={tmp_path}",
    )
    with pytest.raises(StudyError, match=r"cluster.tls.ca_file='/nonexistent/ca.pem': no such"):
        run_study(cfg, log=lambda *_: None)
    certs = write_cluster_certs(tmp_path / "c", ["127.0.0.1"])
    cfg = compose_config(
        "cluster=address",
        "cluster.address=tcp://127.0.0.1:1",
        f"cluster.tls.ca_file={certs['ca']}",
        f"paths.outputs={tmp_path}",
    )
    with pytest.raises(StudyError, match="use a tls:// address"):
        run_study(cfg, log=lambda *_: None)
    assert not (tmp_path / "paper").exists()


def test_plain_tcp_to_another_machine_warns_and_names_tls():
    far = warning_of({"kind": "address", "address": "tcp://10.1.2.3:8786"})
    assert far and "run code as you" in far and "tls://" in far and "pipeline.certs" in far
    assert warning_of({"kind": "address", "address": "tcp://127.0.0.1:8786"}) is None
    assert warning_of({"kind": "address", "address": "tcp://localhost:8786"}) is None
    assert warning_of({"kind": "address", "address": "tls://10.1.2.3:8786"}) is None


def test_certs_command_writes_private_keys_readable_by_the_owner_only(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "pipeline.certs", str(tmp_path), "--host", "node1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    keys = sorted(p.name for p in tmp_path.glob("*-key.pem"))
    assert keys == ["ca-key.pem", "client-key.pem", "scheduler-key.pem", "worker-key.pem"]
    assert all((tmp_path / k).stat().st_mode & 0o777 == 0o600 for k in keys)
    assert "cluster.tls.cert=" in res.stdout
