"""The Export button of a scope's page: the job the worker runs, its progress, the single-use
download (the same bytes as the REST export), the sweeper, and who may do any of it."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import ExportJob, ExportJobStatus
from memories.portability import prepared
from memories.portability.export import export_archive
from scopes.models import Role, Scope
from scopes.services import membership_remove
from tests.dashboard.conftest import HTMX, remember
from tests.factories import UserFactory, add_member


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    return tmp_path


@pytest.fixture
def team_memories(tenancy):
    for text in ("Releases are cut on Tuesdays.", "The staging database is reset nightly."):
        remember(tenancy.owner, text, scope=tenancy.team)
    return tenancy.team


def start(client, scope, capture=None):
    """Press Export (as htmx does). With `capture` the task queued on commit runs (inline when
    the test asks for sync tasks); without, nothing runs (a test's transaction never commits)."""
    if capture is None:
        response = client.post(f"/scopes/{scope.public_id}/exports/", headers=HTMX)
    else:
        with capture(execute=True):
            response = client.post(f"/scopes/{scope.public_id}/exports/", headers=HTMX)
    assert response.status_code == 200, response.status_code
    return response, ExportJob.objects.filter(scope=scope).latest("id")


def test_admins_and_personal_owners_see_the_button_others_do_not(tenancy, login):
    button = 'action="/scopes/{}/exports/"'
    team = button.format(tenancy.team.public_id)
    assert team in login(tenancy.owner).get(f"/scopes/{tenancy.team.public_id}/").content.decode()
    for user in (tenancy.reader, tenancy.writer):
        page = login(user).get(f"/scopes/{tenancy.team.public_id}/").content.decode()
        assert team not in page and ">Export<" not in page
    personal = Scope.objects.get(owner=tenancy.reader, kind="personal")
    page = login(tenancy.reader).get(f"/scopes/{personal.public_id}/").content.decode()
    assert button.format(personal.public_id) in page


def test_export_shows_progress_then_downloads_the_rest_export_once(
    tenancy, login, team_memories, sync_tasks, django_capture_on_commit_callbacks, data_dir
):
    client = login(tenancy.owner)
    answer, job = start(client, team_memories, django_capture_on_commit_callbacks)
    # The answer to the press was rendered before the task ran: the job's first progress.
    body = answer.content.decode()
    assert "Exporting: 0 of 2 memories" in body and 'hx-trigger="load delay:1s"' in body
    progress = client.get(
        f"/scopes/{team_memories.public_id}/exports/{job.public_id}/", headers=HTMX
    )
    body = progress.content.decode()
    assert "Ready: 2 memories exported." in body and "hx-trigger" not in body
    url = f"/scopes/{team_memories.public_id}/exports/{job.public_id}/download/"
    assert url in body
    prepared = data_dir / "exports" / f"{job.public_id}.zip"
    # Only the server's own user may read it.
    assert prepared.stat().st_mode & 0o777 == 0o600
    assert (data_dir / "exports").stat().st_mode & 0o777 == 0o700

    download = client.get(url)
    assert download.status_code == 200
    assert download["Content-Disposition"] == 'attachment; filename="zero-memory-team.zip"'
    data = b"".join(download.streaming_content)
    rest = client.get(f"/api/v1/scopes/{team_memories.public_id}/export")
    assert data == b"".join(rest.streaming_content)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert "manifest.json" in archive.namelist()
    # Once: the file is gone, the link answers 404, the page says so.
    assert not (data_dir / "exports" / f"{job.public_id}.zip").exists()
    assert client.get(url).status_code == 404
    full_page = client.get(f"/scopes/{team_memories.public_id}/exports/{job.public_id}/")
    assert "This export was downloaded." in full_page.content.decode()


def test_the_archive_reports_each_memory_written(tenancy, team_memories):
    heard: list[int] = []
    for _ in export_archive(scopes=[team_memories], progress=heard.append):
        pass
    assert heard == [1, 2]


def test_a_plain_form_post_lands_on_the_progress_page(tenancy, login, team_memories):
    response = login(tenancy.owner).post(f"/scopes/{team_memories.public_id}/exports/")
    job = ExportJob.objects.get(scope=team_memories)
    assert response.status_code == 302
    assert response["Location"] == f"/scopes/{team_memories.public_id}/exports/{job.public_id}/"
    page = login(tenancy.owner).get(response["Location"]).content.decode()
    assert "Exporting: 0 of 2 memories" in page and "<progress" in page


def test_a_job_whose_worker_died_or_failed_says_so(tenancy, login, team_memories):
    client = login(tenancy.owner)
    with_job = start(client, team_memories)[1]
    ExportJob.objects.filter(pk=with_job.pk).update(expires_at=timezone.now())
    page = client.get(f"/scopes/{team_memories.public_id}/exports/{with_job.public_id}/")
    assert "The export did not finish." in page.content.decode()
    ExportJob.objects.filter(pk=with_job.pk).update(status=ExportJobStatus.FAILED)
    page = client.get(f"/scopes/{team_memories.public_id}/exports/{with_job.public_id}/")
    assert "The export did not finish." in page.content.decode()


@pytest.mark.parametrize("who", ["reader", "writer"])
def test_readers_and_writers_get_403_everywhere(
    tenancy, login, team_memories, sync_tasks, django_capture_on_commit_callbacks, who
):
    _, job = start(login(tenancy.owner), team_memories, django_capture_on_commit_callbacks)
    client = login(getattr(tenancy, who))
    base = f"/scopes/{team_memories.public_id}/exports/"
    assert client.post(base).status_code == 403
    assert client.get(f"{base}{job.public_id}/").status_code == 403
    assert client.get(f"{base}{job.public_id}/download/").status_code == 403
    assert ExportJob.objects.filter(scope=team_memories).count() == 1


def test_outsiders_and_other_admins_get_404(
    tenancy, login, team_memories, sync_tasks, django_capture_on_commit_callbacks
):
    _, job = start(login(tenancy.owner), team_memories, django_capture_on_commit_callbacks)
    base = f"/scopes/{team_memories.public_id}/exports/"
    outsider = login(tenancy.outsider)
    assert outsider.post(base).status_code == 404
    assert outsider.get(f"{base}{job.public_id}/download/").status_code == 404
    # Another admin of the same scope: the job is the owner's own.
    other = UserFactory(username="coadmin")
    add_member(team_memories, other, Role.ADMIN)
    client = login(other)
    assert client.get(f"{base}{job.public_id}/").status_code == 404
    assert client.get(f"{base}{job.public_id}/download/").status_code == 404
    assert client.get(f"{base}exj_missing/").status_code == 404
    # The owner still has it: nothing above used it up.
    assert login(tenancy.owner).get(f"{base}{job.public_id}/download/").status_code == 200


def test_an_admin_removed_meanwhile_downloads_nothing(
    tenancy, login, team_memories, sync_tasks, django_capture_on_commit_callbacks
):
    admin = UserFactory(username="leaving")
    add_member(team_memories, admin, Role.ADMIN)
    client = login(admin)
    _, job = start(client, team_memories, django_capture_on_commit_callbacks)
    membership_remove(scope=team_memories, username="leaving")
    url = f"/scopes/{team_memories.public_id}/exports/{job.public_id}/download/"
    assert client.get(url).status_code == 404
    job.refresh_from_db()
    assert job.status == ExportJobStatus.READY  # not used: the sweeper removes it in time


def test_the_sweeper_removes_expired_files_and_strays(
    tenancy, login, team_memories, sync_tasks, django_capture_on_commit_callbacks, data_dir
):
    _, job = start(login(tenancy.owner), team_memories, django_capture_on_commit_callbacks)
    stray = data_dir / "exports" / "exj_stray.zip"
    stray.write_bytes(b"left by a crash")
    path = data_dir / "exports" / f"{job.public_id}.zip"
    assert prepared.export_files_sweep() == 1 and path.exists() and not stray.exists()
    ExportJob.objects.filter(pk=job.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert prepared.export_files_sweep() == 1
    assert not path.exists() and not ExportJob.objects.filter(pk=job.pk).exists()


def test_deleting_the_scope_takes_its_export_files(
    tenancy, login, team_memories, sync_tasks, django_capture_on_commit_callbacks, data_dir
):
    client = login(tenancy.owner)
    _, job = start(client, team_memories, django_capture_on_commit_callbacks)
    assert (data_dir / "exports" / f"{job.public_id}.zip").exists()
    assert client.delete(f"/api/v1/scopes/{team_memories.public_id}").status_code == 204
    assert not (data_dir / "exports" / f"{job.public_id}.zip").exists()
    assert not ExportJob.objects.filter(pk=job.pk).exists()
