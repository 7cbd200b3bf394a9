"""The executor of every Dask backend (``local``, ``address``, ``slurm``, a notebook's own
client): each call a task on the cluster's workers, through the client the backend opened.

The driver waits for its calls in :meth:`DaskExecutor.completed`, calling the backend's
``watch`` about once a second meanwhile; the tasks' progress reports and warnings come back
as Dask worker events (on :data:`~pipeline.long_task_setup.TOPIC` and
:data:`~pipeline.long_task_setup.WARNINGS`), which :meth:`DaskExecutor.worker_events`
subscribes the driver's handlers to.

Dask's ``distributed`` is imported only when a call is submitted.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Hashable, Iterator
from typing import Any

from pipeline.backends.executor import Completed, Executor
from pipeline.backends.last_worker import NoWorkerLeft
from pipeline.backends.worker_deaths import WorkerDied
from pipeline.long_task_setup import TOPIC, WARNINGS
from solvers.kit.task_progress import Progress

WATCH_EVERY_S = 1.0


class DaskExecutor(Executor):
    """Calls as tasks on the workers of ``client`` (a ``distributed.Client``).

    ``watch`` (None: none) is called about once a second while the driver waits for its
    calls; it may say something, or raise StudyError to stop the run (a
    :class:`~pipeline.backends.last_worker.NoWorkerLeft` names calls lost to it, each
    completed as lost before the run stops).  ``explain`` (None: none) turns the error of a
    call that never came back into the one its rows give (its worker's death in words).
    A backend that started
    the cluster closes it on exit, with what is left running; on a client the caller keeps,
    the calls left are cancelled on exit instead (:mod:`pipeline.backends.given_client`).
    """

    def __init__(
        self,
        client: Any,
        n_workers: int,
        description: str,
        watch: Callable[[], None] | None = None,
        explain: Callable[[BaseException], BaseException] | None = None,
    ):
        super().__init__(n_workers, description)
        self.client = client
        self.watch = watch
        self.explain = explain
        self._out: dict[Hashable, Any] = {}  # submitted, not yet completed: key -> future
        self._pending: Any = None  # distributed.as_completed over them, made at the first call

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Hashable:
        from distributed import as_completed

        future = self.client.submit(fn, *args, pure=False)
        self._out[future.key] = future
        if self._pending is None:
            self._pending = as_completed([future])
        else:
            self._pending.add(future)
        return future.key

    def completed(self) -> Iterator[Completed]:
        if self._pending is None:
            return
        try:
            for future in finished(self._pending, self.watch):
                self._out.pop(future.key, None)
                try:
                    call = Completed(future.key, future.result())
                except Exception as exc:  # noqa: BLE001 - the worker died, or the call could not run
                    call = Completed(
                        future.key, lost=exc if self.explain is None else self.explain(exc)
                    )
                future.release()
                yield call
        except NoWorkerLeft as stop:
            for key in [k for k in self._out if k in stop.lost]:
                self._out.pop(key).release()
                yield Completed(key, lost=WorkerDied(stop.why))
            raise

    def pending(self) -> list[Hashable]:
        """The keys of the calls submitted and not yet completed."""
        return list(self._out)

    @contextlib.contextmanager
    def worker_events(
        self, progress: Callable[[Progress], None] | None, warning: Callable[[str], None]
    ) -> Iterator[None]:
        topics = {WARNINGS: lambda event: _warning_event(event, warning)}
        if progress is not None:
            topics[TOPIC] = lambda event: _progress_event(event, progress)
        for topic, handler in topics.items():
            self.client.subscribe_topic(topic, handler)
        try:
            yield
        finally:
            for topic in topics:
                with contextlib.suppress(Exception):  # the cluster may be gone already
                    self.client.unsubscribe_topic(topic)

    def cancel(self) -> None:
        futures, self._out = list(self._out.values()), {}
        if futures:
            self.client.cancel(futures)


def progress_of(event: Any) -> Progress | None:
    """The progress report of a Dask worker event ``(time, message)`` on :data:`TOPIC` (the
    scheduler adds the sending worker's address to the message), or None if it is not one."""
    _, msg = event
    try:
        return Progress(**{k: msg[k] for k in Progress.__dataclass_fields__})
    except (TypeError, KeyError):
        return None


def _progress_event(event: Any, progress: Callable[[Progress], None]) -> None:
    report = progress_of(event)
    if report is not None:
        progress(report)


def _warning_event(event: Any, warning: Callable[[str], None]) -> None:
    """A Dask worker event ``(time, {"task_id", "text"})`` on :data:`WARNINGS`, to ``warning``."""
    _, msg = event
    with contextlib.suppress(TypeError, KeyError):
        warning(str(msg["text"]))


def finished(pending: Any, watch: Callable[[], None] | None) -> Iterator[Any]:
    """The futures of ``pending`` (a Dask ``as_completed``, which may grow meanwhile) as
    they finish, as iterating it gives them; while it waits, ``watch()`` is called every
    WATCH_EVERY_S seconds (its exceptions end the iteration)."""
    if watch is None:
        yield from pending
        return
    last = time.monotonic()
    while True:
        if pending.has_ready():
            yield next(pending)
            continue
        if pending.is_empty():
            return
        with pending.thread_condition:  # notified as a future finishes (as_completed's own)
            pending.thread_condition.wait(timeout=0.1)
        if time.monotonic() - last >= WATCH_EVERY_S:
            watch()
            last = time.monotonic()
