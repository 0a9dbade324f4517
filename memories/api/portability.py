"""REST endpoints of portability: export a scope or every scope the caller administers (a zip,
streamed), import an export into a scope, and the single-use download of an MCP export."""

from __future__ import annotations

import io

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from memories.portability.archive import read_archive
from memories.portability.export import export_archive
from memories.portability.restore import archive_import
from memories.portability.schemas import ArchiveImportOut
from memories.portability.service import exportable_scopes, spool_upload
from memories.portability.tickets import ticket_redeem
from scopes.access import writable_scope
from scopes.models import Scope
from zeromemory.core.actor import actor_for_request
from zeromemory.core.rendering import render

ZIP = OpenApiResponse(OpenApiTypes.BINARY, description="A zip in the export format (README)")


def zip_response(scopes: list[Scope], filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(export_archive(scopes=scopes), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "no-store"
    return response


class ScopeExportView(APIView):
    @extend_schema(responses={200: ZIP}, summary="Export a scope as a zip (admins)")
    def get(self, request, scope_id: str):
        actor = actor_for_request(request)
        scopes = exportable_scopes(actor=actor, scope_ids=[scope_id])
        return zip_response(scopes, f"zero-memory-{scopes[0].slug}.zip")


class ExportView(APIView):
    @extend_schema(
        responses={200: ZIP}, summary="Export every scope the caller administers as a zip"
    )
    def get(self, request):
        scopes = exportable_scopes(actor=actor_for_request(request))
        return zip_response(scopes, "zero-memory-export.zip")


class ExportDownloadView(APIView):
    """The URL itself is the credential (signed, single use, short-lived)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(responses={200: ZIP}, summary="Download an export the MCP tool prepared")
    def get(self, request, ticket: str):
        _, scopes = ticket_redeem(signed=ticket)
        return zip_response(scopes, "zero-memory-export.zip")


class ImportExportView(APIView):
    @extend_schema(
        request={"application/zip": OpenApiTypes.BINARY},
        responses=ArchiveImportOut,
        summary="Import an export (the zip as the body) into a scope (writers)",
    )
    def post(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = writable_scope(actor, scope_id)
        declared = request.META.get("CONTENT_LENGTH")
        upload = spool_upload(
            request.stream or io.BytesIO(),
            declared=int(declared) if declared and declared.isdigit() else None,
        )
        with upload:
            archive = read_archive(upload)
        result = archive_import(scope=scope, archive=archive)
        return render(ArchiveImportOut.of(scope=scope.public_id, result=result))
