"""The declared base of every backend: :class:`Backend`, where a run's tasks execute.

One class per way of running, each over this base: a cluster kind's backend
(``pipeline/backends/<kind>.py``: :class:`~pipeline.backends.sync.SyncBackend`,
:class:`~pipeline.backends.local.LocalBackend`,
:class:`~pipeline.backends.address.AddressBackend`,
:class:`~pipeline.backends.slurm.SlurmBackend`), with its settings model beside it and
registered by kind as its class is defined (:func:`pipeline.config.register_backend`), and
the Dask client a caller keeps (:class:`~pipeline.backends.given_client.ClientBackend`,
chosen by ``client=``, not by the config).  Adding a backend is adding one module: a settings
model (a :class:`pipeline.config.ClusterSettings` whose ``kind`` is the Literal of the new
kind) and a Backend subclass naming it.

A backend answers the run through four calls (:meth:`Backend.check`,
:meth:`Backend.exposure_warning`, :meth:`Backend.workers`, :meth:`Backend.open`), the last
two built here on what each subclass implements (:meth:`Backend.find_workers`,
:meth:`Backend.executor`).
"""

from __future__ import annotations

import abc
import math
from contextlib import AbstractContextManager
from typing import Any, ClassVar, get_args

from pipeline.backends.base import Workers, quiet_while_stopping
from pipeline.backends.executor import Executor
from pipeline.config import ClusterSettings, register_backend


class Backend(abc.ABC):
    """Where a run's tasks execute, as one way of running decides: what it refuses, who
    else can reach it, what it knows of its workers before it opens them, and the
    :class:`~pipeline.backends.executor.Executor` it opens (and closes).

    A subclass with a ``settings_model`` is the backend of that model's kind, registered as
    it is defined and built from a checked cluster section (``cluster``, an instance of its
    model); ``order`` places its kind in the lists of kinds (an error's valid kinds, the
    settings page).  The caller's own client is a backend without one.
    """

    settings_model: ClassVar[type[ClusterSettings] | None] = None
    kind: ClassVar[str | None] = None  # the Literal of settings_model.kind
    order: ClassVar[float] = math.inf  # a backend registered from outside: after the rest

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        model = cls.__dict__.get("settings_model")
        if model is None:
            return
        kinds = get_args(model.model_fields["kind"].annotation)
        if len(kinds) != 1 or not isinstance(kinds[0], str):
            raise TypeError(
                f"{model.__qualname__}.kind: declare it as the Literal of one kind, "
                'e.g. kind: Literal["local"]'
            )
        cls.kind = kinds[0]
        register_backend(cls)

    def __init__(self, cluster: ClusterSettings | None = None):
        self.cluster = cluster  # the checked cluster section (None: the caller's client)
        self._workers: Workers | None = None

    @abc.abstractmethod
    def check(self) -> None:
        """Refuse what cannot work here (values, files, programs, workers), before any
        work: a StudyError naming the key and the value."""

    def exposure_warning(self) -> str | None:
        """A warning about who else can reach the cluster, or None (nothing to say)."""
        return None

    @abc.abstractmethod
    def find_workers(self) -> Workers:
        """What the backend knows of the workers a run's tasks get, before it opens them
        (:class:`~pipeline.backends.base.Workers`)."""

    @abc.abstractmethod
    def executor(self, workers: Workers) -> AbstractContextManager[Executor]:
        """A context manager yielding the executor the run's calls go to, given what
        :meth:`find_workers` answered; what it started is closed on exit."""

    def workers(self) -> Workers:
        """What the backend knows of its workers, asked once a backend (``cluster=address``:
        its scheduler answers one ``identity`` request)."""
        if self._workers is None:
            self._workers = self.find_workers()
        return self._workers

    def open(self) -> AbstractContextManager[Executor]:
        """An executor on the workers (:meth:`executor`); what the backend started is
        closed on exit, without a word from Dask once Ctrl-C stopped the run
        (:func:`.base.quiet_while_stopping`)."""
        return quiet_while_stopping(self.executor(self.workers()))
