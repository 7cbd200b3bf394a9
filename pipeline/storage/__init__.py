"""The study folder and its store: :class:`~pipeline.storage.study_folder.StudyFolder` (its
layout, checks, locks and upkeep), the results files, the file-system rule."""
