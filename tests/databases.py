"""The test database: migrated once per run into a template, copied for each pytest process.

Migrating takes half a minute, and under pytest-xdist every worker would migrate its own test
database side by side on the same two cores. Instead the first process to get here migrates a
template database (under a PostgreSQL advisory lock, so the others wait for it rather than
migrating too), marks it with the run's id, and every process then gets its own database as a
copy of it (``CREATE DATABASE … TEMPLATE``, about a second). A template left by an earlier run
is rebuilt, since the migrations may have changed since. The controller drops the template when
the run ends (:func:`drop_template`).

``--reuse-db`` and ``--nomigrations`` keep pytest-django's own setup.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

# A process that is no xdist worker runs the whole session itself: its own run id.
_LOCAL_RUN_ID = uuid.uuid4().hex


def run_id(config: pytest.Config) -> str:
    """The same id in the controller and every worker of one run (xdist's testrunuid)."""
    return getattr(config, "workerinput", {}).get("testrunuid", _LOCAL_RUN_ID)


def template_name(config: pytest.Config) -> str:
    """The template's name: the unsuffixed test database name (ZM_TEST_DATABASE or
    test_zeromemory) with `_template`, so two runs against one server keep theirs apart."""
    from django.db import connection

    name = connection.creation._get_test_db_name()
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker:
        name = name.removesuffix(f"_{worker}")
    return f"{name}_template"


def _quoted(name: str) -> str:
    from django.db import connection

    return connection.ops.quote_name(name)


def _copy_of_template(template: str, copy: str, *, marker: str, verbosity: int) -> None:
    """Create `copy` from `template`, migrating the template first unless this run already did.
    The advisory lock makes the other processes wait until the template is there, and keeps it
    free of sessions while it is copied (CREATE DATABASE … TEMPLATE needs that)."""
    from django.db import connection

    with connection.creation._nodb_cursor() as lock_cursor:
        lock_cursor.execute("SELECT pg_advisory_lock(hashtext(%s))", [template])
        try:
            lock_cursor.execute(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
                [template],
            )
            found = lock_cursor.fetchone()
            if found is None or found[0] != marker:
                _migrate_into(template, verbosity=verbosity)
                lock_cursor.execute(f"COMMENT ON DATABASE {_quoted(template)} IS %s", [marker])
            lock_cursor.execute(f"DROP DATABASE IF EXISTS {_quoted(copy)} WITH (FORCE)")
            lock_cursor.execute(f"CREATE DATABASE {_quoted(copy)} TEMPLATE {_quoted(template)}")
        finally:
            lock_cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [template])


def _migrate_into(template: str, *, verbosity: int) -> None:
    """Django's own create_test_db (drop, create, migrate, cache table) under the template's
    name; the connection's names are put back afterwards."""
    from django.conf import settings
    from django.db import connection

    test_settings = connection.settings_dict["TEST"]
    own_name, database_name = test_settings.get("NAME"), connection.settings_dict["NAME"]
    test_settings["NAME"] = template
    try:
        connection.creation.create_test_db(
            verbosity=verbosity, autoclobber=True, serialize=False, keepdb=False
        )
    finally:
        connection.close()
        test_settings["NAME"] = own_name
        settings.DATABASES[connection.alias]["NAME"] = database_name
        connection.settings_dict["NAME"] = database_name


def drop_template(config: pytest.Config) -> None:
    """Drop this run's template (the controller, once every worker has finished)."""
    from django.db import connection
    from pytest_django.plugin import blocking_manager_key

    if getattr(config, "workerinput", None) is not None or connection.vendor != "postgresql":
        return
    template = _quoted(template_name(config))
    with config.stash[blocking_manager_key].unblock(), connection.creation._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {template} WITH (FORCE)")


@pytest.fixture(scope="session")
def django_db_setup(  # noqa: PLR0913, PLR0917 - pytest-django's fixture signature
    request: pytest.FixtureRequest,
    django_test_environment: None,
    django_db_blocker,
    django_db_use_migrations: bool,
    django_db_keepdb: bool,
    django_db_createdb: bool,
    django_db_modify_db_settings: None,
) -> Iterator[None]:
    from django.conf import settings
    from django.db import connection, connections
    from django.test.utils import setup_databases, teardown_databases

    verbosity = request.config.option.verbose
    if django_db_keepdb or not django_db_use_migrations or connection.vendor != "postgresql":
        # pytest-django's own setup, as its fixture does it.
        from pytest_django.fixtures import _disable_migrations

        if not django_db_use_migrations:
            _disable_migrations()
        with django_db_blocker.unblock():
            config = setup_databases(
                verbosity=verbosity,
                interactive=False,
                aliases=list(connections),
                keepdb=django_db_keepdb and not django_db_createdb,
            )
        yield
        if not django_db_keepdb:
            with django_db_blocker.unblock():
                teardown_databases(config, verbosity=verbosity)
        return

    database_name = connection.settings_dict["NAME"]
    own_copy = connection.creation._get_test_db_name()
    marker = f"zero-memory test template, run {run_id(request.config)}"
    with django_db_blocker.unblock():
        _copy_of_template(
            template_name(request.config), own_copy, marker=marker, verbosity=verbosity
        )
    connection.close()
    settings.DATABASES[connection.alias]["NAME"] = own_copy
    connection.settings_dict["NAME"] = own_copy
    # Read replicas (ZM_DATABASE_REPLICA_URLS) mirror the default database in tests.
    for alias in connections:
        if connections[alias].settings_dict.get("TEST", {}).get("MIRROR") == connection.alias:
            connections[alias].creation.set_as_test_mirror(connection.settings_dict)
    yield
    with django_db_blocker.unblock():
        connection.creation.destroy_test_db(database_name, verbosity=verbosity)
