"""What the families share and the pipeline reads from them, none of it a game:

- :mod:`solvers.kit.task_context`: the long-task facility, what a task that runs for hours
  may ask of where it runs (:mod:`solvers.kit.budget`, :mod:`solvers.kit.checkpoints` with
  their :mod:`solvers.kit.seals` and :mod:`solvers.kit.hold`, :mod:`solvers.kit.task_progress`;
  the context current in a process, :mod:`solvers.kit.current_task`; the way a task spreads
  its pieces, :mod:`solvers.kit.spread`); the pipeline's side is
  ``pipeline/long_task_setup.py`` (and ``pipeline/backends/spreading.py``);
- :mod:`solvers.kit.words`: sizes and times in words a person writes;
- :mod:`solvers.kit.atomic_files`: files synced to disk and replaced atomically;
- :mod:`solvers.kit.stored_rows`: a family's stored rows read lazily (SQL over its Parquet
  files, or a DataFrame), handed to its summary and report functions;
- :mod:`solvers.kit.summary_parts`: what ``summary.md`` is made of: Markdown tables and text,
  PNG plots;
- :mod:`solvers.kit.report_sections`: what ``report.html`` is made of: sections of tables
  and interactive Plotly figures;
- :mod:`solvers.kit.compiled`: calls of compiled kernels that Ctrl-C cannot break (it is
  raised once the kernel returns).

:mod:`solvers` imports this package but none of its modules: a worker that solves tasks
never loads matplotlib or Plotly.
"""
