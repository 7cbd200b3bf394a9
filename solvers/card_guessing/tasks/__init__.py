"""From a task to its result row: checks and rows per kind of task."""
