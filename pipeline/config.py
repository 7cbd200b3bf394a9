"""The run configuration, typed and checked once, at the door.

Hydra composes the config from ``conf/`` (where every default lives, with its comment);
:func:`checked_config` then validates the whole of it against the pydantic models below
before any work: strict types (``no``, ``"false"`` or ``1`` are not booleans), ranges, one
model per cluster kind (chosen by ``cluster.kind``; each is declared beside its backend in
``pipeline/backends/``, :class:`ClusterSettings`), and no unknown keys (``+run.foo=1`` is
an error, not silently ignored), in the study section too (:class:`StudyConfig`: a misspelled
``stratagies:`` is refused, not ignored).  A bad value raises :class:`StudyError` naming the
key and the value; the study grid's values are checked by :func:`pipeline.running.plan.planned`.

Why pydantic rather than Hydra structured configs: OmegaConf converts ``"no"``/``"off"`` to
booleans, has no ranges or per-kind unions, and reports errors as Hydra tracebacks (exit 1);
pydantic's strict mode and discriminated unions express every rule here in one place.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Union, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializeAsAny,
    TypeAdapter,
    ValidationError,
    WrapValidator,
)

from pipeline.errors import StudyError, short_repr
from pipeline.storage.safe_paths import study_name_problem

MAX_TIMEOUT_S = 30 * 24 * 3600.0  # a task time limit longer than 30 days is a typo


class Strict(BaseModel):
    """A config section: strict types, unknown keys refused, frozen once checked.

    No field has a default here: conf/ holds every default (with its comment), once.
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("must be a positive integer")
    return value


def _positive_seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a positive number of seconds")
    if not math.isfinite(value) or not value > 0:
        raise ValueError("must be a positive, finite number of seconds")
    return float(value)


def choice(*choices: Any):
    """A check that a setting is one of ``choices`` (an AfterValidator's function)."""

    def check(value: Any) -> Any:
        if isinstance(value, bool) and True not in choices or value not in choices:
            raise ValueError(f"unknown; valid: {', '.join(map(str, choices))}")
        return value

    return check


def _bool_or_auto(value: Any) -> bool | str:
    if isinstance(value, bool) or value == "auto":
        return value
    raise ValueError("must be true, false or auto")


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _batch_size(value: Any) -> int | str:
    if value is None or value == "auto":
        return "auto"
    try:
        return _positive_int(value)
    except ValueError:
        raise ValueError("must be a positive integer or auto") from None


def _timeout(value: Any) -> float | None:
    if value is None:
        return None
    seconds = _positive_seconds(value)
    if seconds > MAX_TIMEOUT_S:
        raise ValueError(f"must be at most {MAX_TIMEOUT_S:g} seconds (30 days)")
    return seconds


def seconds(value: Any) -> float:
    """A checked duration setting ("50m", "90s", 30) in seconds."""
    from dask.utils import parse_timedelta

    return float(parse_timedelta(value, default="seconds"))


def duration(value: Any) -> Any:
    """``value`` if it is a duration (kept as given, so messages quote it as given)."""
    from dask.utils import parse_timedelta

    try:
        seconds = parse_timedelta(value, default="seconds")
    # "1e400s": int() of infinity; a list or a mapping: AttributeError (no .replace)
    except (TypeError, ValueError, KeyError, OverflowError, AttributeError):
        seconds = None
    if seconds is None or isinstance(value, bool) or not 0 <= seconds < math.inf:
        raise ValueError("give a duration such as 50m or 90s")
    return value


def _memory(value: Any) -> str | int:
    if value == "auto":
        return value
    from dask.utils import parse_bytes  # 0.17 s to import: not for auto

    try:
        if isinstance(value, bool) or not isinstance(value, str | int) or parse_bytes(value) <= 0:
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise ValueError("give a size such as 4GiB, or auto") from None
    return value


# the units past Dask's (PB, PiB) in which sizes are said (solvers.kit.words.format_bytes)
LARGE_UNITS = {"eb": 10**18, "zb": 10**21, "yb": 10**24, "eib": 2**60, "zib": 2**70, "yib": 2**80}


def size_bytes(value: str | int) -> int:
    """A size in bytes, as Dask's ``parse_bytes`` reads it ("8GB", "512MiB", "1e9") or in a
    unit past PB that the plan's sizes are said in ("1EB", "2.5ZB", "1YiB"); ValueError,
    TypeError or OverflowError for anything else."""
    from dask.utils import parse_bytes  # 0.17 s to import: only for a size given

    if isinstance(value, str):
        number, unit = re.fullmatch(r"(.*?)([A-Za-z]*)", value.replace(" ", "")).groups()
        if unit.lower() in LARGE_UNITS:
            return int(float(number or "1") * LARGE_UNITS[unit.lower()])
    return parse_bytes(value)


def _memory_budget(value: Any) -> str | int | None:
    """``run.memory_budget``: null (the memory of where the run executes) or a size."""
    if value is None:
        return None
    try:
        if isinstance(value, bool) or not isinstance(value, str | int) or size_bytes(value) <= 0:
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise ValueError(
            "give a size such as 8GB or 512MiB (B, kB, MB, GB, TB, PB, EB, ZB, YB, or KiB to "
            "YiB), or null (the memory of where the run executes)"
        ) from None
    return value


def _optional_file(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError("must be a file path")
    return value


PositiveInt = Annotated[int, BeforeValidator(_positive_int)]
Bool = Annotated[bool, BeforeValidator(_bool)]
Duration = Annotated[Any, AfterValidator(duration)]
Memory = Annotated[Any, AfterValidator(_memory)]
FilePath = Annotated[Any, AfterValidator(_optional_file)]


class StoreConfig(Strict):
    recompute: Bool


class RunConfig(Strict):
    batch_size: Annotated[Any, AfterValidator(_batch_size)]
    batch_seconds: Annotated[Any, AfterValidator(_positive_seconds)]
    max_batch: PositiveInt
    max_in_flight: PositiveInt
    task_timeout_s: Annotated[Any, AfterValidator(_timeout)]
    progress: Annotated[Any, AfterValidator(_bool_or_auto)]
    quiet: Bool
    memory_budget: Annotated[Any, AfterValidator(lambda v: _memory_budget(v))]


class PathsConfig(Strict):
    outputs: Annotated[Any, AfterValidator(lambda v: folder_path(v))]


def folder_path(value: Any) -> str:
    """A folder path setting: text or a Path, not empty, of printable characters."""
    if not isinstance(value, str | Path) or not str(value):
        raise ValueError("must be a folder path")
    odd = next((c for c in str(value) if not c.isprintable()), None)
    if odd is not None:
        raise ValueError(unprintable_problem(odd, "a folder path"))
    return str(value)


class ClusterSettings(Strict):
    """The settings of one cluster kind (``cluster.*``): each backend declares its own model,
    a subclass of this one whose ``kind`` is the Literal of its kind, beside it
    (``pipeline/backends/<kind>.py``), and the config takes the model of the kind given
    (:func:`cluster_models`)."""

    kind: str


# The cluster kinds: kind -> its backend class (a pipeline.backends.Backend with a
# settings_model), in the order registered.  Held here, below the backends, so the config
# asks for the kinds without importing a backend by name: each registers itself as its class
# is defined (Backend.__init_subclass__), and the built-in ones are found by importing every
# module of their package, as Hydra finds its plugins.
BACKENDS_PACKAGE = "pipeline.backends"
_BACKENDS: dict[str, Any] = {}
_FOUND = [False]  # whether the modules of BACKENDS_PACKAGE were imported


def register_backend(backend: Any) -> None:
    """Hold ``backend`` (a Backend subclass with a ``settings_model``) as the backend of its
    ``kind``; ValueError for a kind another class holds already."""
    held = _BACKENDS.get(backend.kind)
    name = f"{backend.__module__}.{backend.__qualname__}"
    if held is not None and f"{held.__module__}.{held.__qualname__}" != name:
        raise ValueError(
            f"cluster.kind={backend.kind!r}: registered by {held.__module__}.{held.__qualname__} "
            f"already, so {name} cannot take it"
        )
    _BACKENDS[backend.kind] = backend


def unregister_backend(kind: str) -> None:
    """Drop the backend of ``kind`` (one registered for a while: a test's)."""
    _BACKENDS.pop(kind, None)


OWN_BACKENDS = "GUESSLAB_BACKENDS"  # module names of one's own backends, comma-separated
BACKENDS_GROUP = "guesslab.backends"  # the entry point group of installed ones
_OWN_ERRORS: dict[str, str] = {}  # where a backend module was named -> why it failed


def cluster_backends() -> dict[str, Any]:
    """Every registered backend class by kind, in the order they are listed (their
    ``order``, then as registered); the first time, the built-in ones imported, and one's
    own: the modules named in ``GUESSLAB_BACKENDS`` and the entry points of
    ``guesslab.backends``, each defining its backend as the built-in modules do.  StudyError
    naming the setting while one of those could not be imported."""
    if not _FOUND[0]:
        import importlib
        import pkgutil

        package = importlib.import_module(BACKENDS_PACKAGE)
        for module in pkgutil.iter_modules(package.__path__, f"{BACKENDS_PACKAGE}."):
            importlib.import_module(module.name)
        _FOUND[0] = True
        _import_own_backends()
    if _OWN_ERRORS:
        where, why = next(iter(_OWN_ERRORS.items()))
        raise StudyError(f"{where} {why}")
    ranked = sorted(enumerate(_BACKENDS.items()), key=lambda item: (item[1][1].order, item[0]))
    return dict(pair for _, pair in ranked)


def _import_own_backends() -> None:
    """Import the backend modules of ``GUESSLAB_BACKENDS`` and of the entry point group
    ``guesslab.backends``; each failure held, in one line, for :func:`cluster_backends`."""
    import importlib
    import os
    from importlib.metadata import entry_points

    named = os.environ.get(OWN_BACKENDS, "")
    loads = [
        (f"{OWN_BACKENDS}={named!r}: module {name!r}", lambda n=name: importlib.import_module(n))
        for name in filter(None, (n.strip() for n in named.split(",")))
    ]
    loads += [
        (f"entry point {BACKENDS_GROUP} {entry.name!r}", entry.load)
        for entry in entry_points(group=BACKENDS_GROUP)
    ]
    for where, load in loads:
        try:
            load()
        except Exception as exc:  # any error of a user's module, said in one line
            _OWN_ERRORS[where] = f"cannot be imported ({type(exc).__name__}: {exc})"


def store_cluster_kinds() -> None:
    """Give Hydra a config ``cluster/<kind>`` for each registered kind that has no file in
    ``conf/cluster/`` (one's own backend), so that ``cluster=<kind>`` chooses it on the
    command line as a shipped kind: its settings' defaults, and ``???`` (Hydra's mark of a
    value to give) for each setting without one."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    for kind, backend in cluster_backends().items():
        if not cluster_file(kind).is_file():
            store.store(group="cluster", name=kind, node=settings_node(backend.settings_model))


def settings_node(model: type[ClusterSettings]) -> dict[str, Any]:
    """A cluster kind's settings as a config: each one's default, ``???`` where it has none."""
    from pydantic_core import to_jsonable_python

    node: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if name == "kind":
            node[name] = get_args(field.annotation)[0]
        elif field.is_required():
            node[name] = REQUIRED
        else:
            node[name] = to_jsonable_python(field.get_default(call_default_factory=True))
    return node


def cluster_models() -> dict[str, type[ClusterSettings]]:
    """The settings model of each cluster kind, by kind, in the order they are listed: those
    of the registered backends (:func:`cluster_backends`)."""
    return {kind: backend.settings_model for kind, backend in cluster_backends().items()}


@functools.cache
def _union_of(models: tuple[type[ClusterSettings], ...]) -> TypeAdapter[Any]:
    return TypeAdapter(Annotated[Union[models], Field(discriminator="kind")])  # noqa: UP007 - a tuple of types


def _cluster_adapter() -> TypeAdapter[Any]:
    """The cluster section's check: one model per kind, chosen by ``cluster.kind`` (built
    again when a backend is registered)."""
    return _union_of(tuple(cluster_models().values()))


def _of_its_kind(value: Any, handler: Any) -> ClusterSettings:
    """The cluster section checked by the model of its kind (the registry's, not the base's:
    ``handler`` is not called)."""
    return _cluster_adapter().validate_python(_given(value))


def _given(section: Any) -> Any:
    """A cluster section without the ``???`` of a kind of one's own (its config made by
    :func:`store_cluster_kinds`, no file): a setting not given, said as required.  A shipped
    kind's ``???`` stays for its own check to explain (``cluster.address``)."""
    if not isinstance(section, Mapping) or not isinstance(section.get("kind"), str):
        return section
    if cluster_file(section["kind"]).is_file():
        return section
    return {k: v for k, v in section.items() if not (isinstance(v, str) and v == REQUIRED)}


Cluster = Annotated[SerializeAsAny[ClusterSettings], WrapValidator(_of_its_kind)]
STAGES = ("all", "plan", "run", "summary")


def _study_name(value: Any) -> str:
    """A study's name: its folder's name in paths.outputs (pipeline.storage.safe_paths), of
    printable characters (:func:`unprintable_problem`)."""
    if not isinstance(value, str):
        raise ValueError("must be a plain, non-empty name")
    problem = study_name_problem(value) or unprintable_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def unprintable_problem(name: str, what: str = "a folder name") -> str | None:
    """Why ``name``, which becomes the name of a folder or a file, cannot (None: it can): a
    character that is not printable (a line break, a tab, ESC, DEL, a direction mark such
    as U+202E: each would reach listings and terminals as it is), or blank or spaces at
    either end (a name that looks like another, or like none)."""
    odd = next((c for c in name if not c.isprintable()), None)
    if odd is not None:
        shown = odd.encode("unicode_escape").decode()
        return (
            f"holds {shown}, a character that is not printable; {what} has printable "
            "characters only (no line break, tab, terminal escape or direction mark)"
        )
    if name != name.strip():
        return f"starts or ends with a space; {what} has none at either end"
    return None


Axes = dict[str, Any]  # parameter -> list of values (each axis is checked by planned)
Strategies = dict[str, Axes | None]  # strategy -> its own axes


class GridPart(Strict):
    """One part of ``study.grids``: its own axes and strategies (the family is the study's)."""

    grid: Axes | None = None
    strategies: Strategies | None = None


class ObjectiveConfig(Strict):
    """A study's ``objective:`` block: what a search over a strategy's parameters optimises
    (checked against the study's strategies and the family's columns by
    :func:`pipeline.search.objective.checked_objective`)."""

    strategy: str
    # absent: expected_score, maximize, mean, none (pipeline.search.objective.DEFAULTS)
    column: str | None = None
    direction: Annotated[Any, AfterValidator(choice("maximize", "minimize"))] | None = None
    combine: Annotated[Any, AfterValidator(choice("mean", "min", "max"))] | None = None
    relative_to: str | None = None


class StudyConfig(Strict):
    """A study file (conf/study/NAME.yaml or the user's own): the study's keys, strictly.

    Its keys are optional (a study gives ``grid`` and ``strategies``, or ``grids``), so
    these models, unlike the run config's, have defaults: absent means not given.  The grid's
    values are checked by :func:`pipeline.running.plan.planned` against the family's parameters.
    """

    name: Annotated[Any, AfterValidator(_study_name)]
    family: str
    description: str | None = None
    grid: Axes | None = None
    strategies: Strategies | None = None
    grids: list[GridPart] | None = None
    objective: ObjectiveConfig | None = None

    def plain(self) -> dict[str, Any]:
        """The study as plain dicts and lists, the keys not given left out."""
        return self.model_dump(exclude_none=True)


# the models with defaults (optional study keys)
STUDY_MODELS = (StudyConfig, GridPart, ObjectiveConfig)


class Config(Strict):
    """The whole run configuration (the study grid is checked by pipeline.running.plan.planned)."""

    stage: Annotated[Any, AfterValidator(choice(*STAGES))]
    store: StoreConfig
    run: RunConfig
    paths: PathsConfig
    cluster: Cluster
    study: StudyConfig


def cluster_model(kind: Any) -> type[ClusterSettings]:
    """The settings model of ``cluster.kind``; StudyError listing the kinds for another."""
    models = cluster_models()
    if kind not in models:
        raise StudyError(f"cluster.kind={kind!r}: unknown; valid: {', '.join(models)}")
    return models[kind]


def conf_dir() -> Path:
    """The folder of guesslab's own configs (the installed package ``pipeline.conf``)."""
    import importlib.resources

    return Path(str(importlib.resources.files("pipeline.conf")))


def cluster_config(cluster: Mapping[str, Any]) -> Any:
    """A checked cluster config: ``conf/cluster/<kind>.yaml`` with ``cluster``'s values over
    it (for Python callers: ``cluster_config({"kind": "local", "n_workers": 1})``)."""
    from omegaconf import DictConfig, OmegaConf

    if isinstance(cluster, DictConfig):
        cluster = OmegaConf.to_container(cluster, resolve=True)

    kind = cluster.get("kind")
    cluster_model(kind)
    defaults = {k: v for k, v in cluster_defaults(kind).items() if v != REQUIRED}
    merged = {**defaults, **cluster}
    if isinstance(cluster.get("tls"), Mapping):
        merged["tls"] = {**(defaults.get("tls") or {}), **cluster["tls"]}
    try:
        return _cluster_adapter().validate_python(_given(merged))
    except ValidationError as exc:
        raise StudyError(_message(exc, {"cluster": merged}, prefix="cluster")) from None


REQUIRED = "???"  # Hydra's mark of a value the user must give (cluster.address)


def cluster_file(kind: str) -> Path:
    """``conf/cluster/<kind>.yaml``: a shipped kind's settings with their comments (a kind of
    one's own has none: :func:`store_cluster_kinds`)."""
    return conf_dir() / "cluster" / f"{kind}.yaml"


def cluster_defaults(kind: str) -> dict[str, Any]:
    """The defaults of a cluster kind: ``conf/cluster/<kind>.yaml`` (none for a kind
    registered without a file there, whose every key is then given)."""
    import yaml

    path = cluster_file(kind)
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def plain(cfg: Any) -> Any:
    """A config (OmegaConf or mapping) as plain dicts and lists."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(cfg, DictConfig | ListConfig):
            return OmegaConf.to_container(cfg, resolve=True)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(cfg, Mapping):
        return {k: plain(v) for k, v in cfg.items()}
    if isinstance(cfg, list | tuple):
        return [plain(v) for v in cfg]
    return cfg


def checked_config(cfg: Mapping[str, Any]) -> Config:
    """The validated run configuration; StudyError naming the first bad key and value."""
    cluster = cfg.get("cluster")
    cluster_model(cluster.get("kind") if isinstance(cluster, Mapping) else None)
    try:
        return Config.model_validate(dict(cfg))
    except ValidationError as exc:
        raise StudyError(_message(exc, cfg)) from None


def checked_study(study: Mapping[str, Any]) -> StudyConfig:
    """The validated study section; StudyError naming the first bad key and value."""
    try:
        return StudyConfig.model_validate(dict(study))
    except ValidationError as exc:
        raise StudyError(_message(exc, {"study": study}, prefix="study")) from None


def _message(exc: ValidationError, cfg: Mapping[str, Any], prefix: str = "") -> str:
    """``key=value: reason`` for the first error pydantic found."""
    err = exc.errors(include_url=False)[0]
    loc: list[str | int] = [p for p in err["loc"] if p != "[key]"]
    loc = [prefix, *loc] if prefix else loc
    if len(loc) > 1 and loc[0] == "cluster" and loc[1] in cluster_models():
        del loc[1]  # the union's tag (cluster.kind), not a key
    if "[key]" in err["loc"]:  # a mapping's key that is not text (``1:`` in YAML)
        key = ".".join(str(p) for p in loc)
        return f"{key}: a key must be a name, not {short_repr(err['input'])}"
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    reason = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        valid = ", ".join(_known(loc, cfg))
        return f"{key}={short_repr(err['input'])}: unknown key; valid: {valid}"
    if err["type"] == "missing":
        return f"{key}: required, and not given"
    if err["type"] in ("dict_type", "model_type"):
        reason = "must be a mapping of names to values"
    if err["type"] in ("string_type", "int_type", "float_type", "bool_type", "list_type"):
        reason = reason.replace("Input should be", "must be")
    return f"{key}={short_repr(err['input'])}: {reason}"


def _known(loc: list[str | int], cfg: Mapping[str, Any]) -> list[str]:
    """The keys valid where an unknown key ``loc`` was given."""
    model: Any = Config
    for part in loc[:-1]:
        if isinstance(part, int):
            continue  # an item of a list of sections (study.grids)
        if part == "cluster":
            model = cluster_model(cfg["cluster"]["kind"])
            continue
        model = _section(model.model_fields[part].annotation)
    return list(model.model_fields)


def section_models(annotation: Any) -> list[type[BaseModel]]:
    """Every model inside an annotation: ``[GridPart]`` of ``list[GridPart] | None``, every
    cluster kind's settings model of the cluster section."""
    if isinstance(annotation, type) and issubclass(annotation, ClusterSettings):
        return list(cluster_models().values())
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in section_models(arg)]


def _section(annotation: Any) -> Any:
    """The model inside an annotation (``GridPart`` of ``list[GridPart] | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if (found := _section(arg)) is not None:
            return found
    return None
