"""The run's config (pipeline/config.py and conf/): defaults live in conf/ only, and the
composed config is what a plain ``python -m pipeline`` runs."""

from __future__ import annotations

from pipeline.config import checked_config, plain
from tests.helpers.runs import compose_config


def test_config_defaults_live_in_conf_only():
    """The typed config has no defaults of its own (conf/ holds each, once): every field of
    every model is required, and the composed config passes the check as it is.  The study
    file's models are the exception: a study's keys are optional (grid and strategies, or
    grids), and absent means not given."""
    from pydantic import BaseModel

    from pipeline import config as schema

    models = [m for m in vars(schema).values() if isinstance(m, type) and issubclass(m, BaseModel)]
    assert len(models) > 6 and set(schema.STUDY_MODELS) <= set(models)
    for model in set(models) - set(schema.STUDY_MODELS):
        assert all(f.is_required() for f in model.model_fields.values()), model
    for cluster in ("sync", "local", "address", "slurm"):
        extra = ["cluster.address=tcp://127.0.0.1:1"] if cluster == "address" else []
        checked = checked_config(plain(compose_config(f"cluster={cluster}", *extra)))
        assert checked.cluster.kind == cluster


def test_default_config_is_the_paper_study_on_a_local_cluster():
    cfg = compose_config()
    assert cfg.study.name == "paper" and cfg.cluster.kind == "local"
    assert cfg.cluster.n_workers == 2 and cfg.cluster.threads_per_worker == 1
