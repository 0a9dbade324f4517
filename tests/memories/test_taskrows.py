"""django-q2's rows of our tasks: every task that takes arguments is declared with the model of
the rows it names, so an erasure (tests/memories/test_erasure.py) can find its rows."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from memories.taskrows import row_tasks


def test_every_task_that_takes_arguments_is_declared():
    """The erasure finds django-q2's rows of a task through `memories.taskrows.row_tasks`: every
    task function of the code (a function of a `tasks` module with positional parameters, as
    django-q2 calls them) is declared there, a background job's by its declaration."""
    import memories

    declared = row_tasks()
    undeclared = []
    for found in pkgutil.walk_packages(memories.__path__, "memories."):
        if not found.name.endswith(".tasks"):
            continue
        module = importlib.import_module(found.name)
        for name, function in inspect.getmembers(module, inspect.isfunction):
            positional = [
                parameter
                for parameter in inspect.signature(function).parameters.values()
                if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
            ]
            path = f"{module.__name__}.{name}"
            if function.__module__ == module.__name__ and positional and path not in declared:
                undeclared.append(path)
    assert not undeclared, undeclared
    assert set(declared) >= {
        "memories.canonical.tasks.canonicalize",
        "memories.capture.tasks.extract",
        "memories.hygiene.tasks.judge_many",
    }
