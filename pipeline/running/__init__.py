"""The run of a study's tasks: the plan, the claims, the needs, the driver that cuts and stores
the batches, the worker that runs them, the progress, the run record."""
