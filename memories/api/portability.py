"""REST endpoints of portability: export a scope or every scope the caller administers (a zip,
streamed), import an export into a scope, and the single-use download of an MCP export."""

from __future__ import annotations

import io

from django.conf import settings
from django.http import StreamingHttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from memories.portability.archive import read_archive
from memories.portability.archive_import import archive_import
from memories.portability.export import export_archive
from memories.portability.schemas import ArchiveImportOut, SourceImportOut
from memories.portability.service import exportable_scopes, spool_upload
from memories.portability.sources.registry import READERS
from memories.portability.sources.service import source_import
from memories.portability.tickets import ticket_redeem
from scopes.access import administrable_scope, writable_scope
from scopes.models import Scope
from zeromemory.core.actor import actor_for_request
from zeromemory.core.errors import NotFound
from zeromemory.core.rendering import render
from zeromemory.core.serializers import StrictSerializer

ZIP = OpenApiResponse(
    OpenApiTypes.BINARY, description="A zip in the export format (docs/export-format.md)"
)


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
    class Options(StrictSerializer):
        keep_times = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        parameters=[Options],
        request={"application/zip": OpenApiTypes.BINARY},
        responses=ArchiveImportOut,
        summary="Import an export (the zip as the body) into a scope (writers; keep_times: admins)",
    )
    def post(self, request, scope_id: str):
        actor = actor_for_request(request)
        options = self.Options(data=request.query_params.dict())
        options.is_valid(raise_exception=True)
        keep_times = options.validated_data["keep_times"]
        scope = (administrable_scope if keep_times else writable_scope)(actor, scope_id)
        declared = request.META.get("CONTENT_LENGTH")
        upload = spool_upload(
            request.stream or io.BytesIO(),
            declared=int(declared) if declared and declared.isdigit() else None,
        )
        with upload:
            archive = read_archive(upload, max_total=settings.IMPORT_MAX_REQUEST_BYTES)
        result = archive_import(
            actor=actor,
            scope=scope,
            archive=archive,
            keep_times=keep_times,
            budget=settings.IMPORT_MAX_EMBED_CHARS,
        )
        return render(ArchiveImportOut.of(scope=scope.public_id, result=result))


class ImportFromView(APIView):
    class Options(StrictSerializer):
        dry_run = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        parameters=[Options],
        request={
            "application/json": OpenApiTypes.BINARY,
            "application/zip": OpenApiTypes.BINARY,
        },
        responses=SourceImportOut,
        summary="Import another system's file (the body, as it wrote it) into a scope (writers)",
        description="`system`: " + ", ".join(sorted(READERS)) + " (docs/import.md).",
    )
    def post(self, request, scope_id: str, system: str):
        actor = actor_for_request(request)
        options = self.Options(data=request.query_params.dict())
        options.is_valid(raise_exception=True)
        scope = writable_scope(actor, scope_id)
        if system not in READERS:
            raise NotFound(_("No importer for %(system)s.") % {"system": system[:40]})
        declared = request.META.get("CONTENT_LENGTH")
        upload = spool_upload(
            request.stream or io.BytesIO(),
            declared=int(declared) if declared and declared.isdigit() else None,
        )
        with upload:
            report = source_import(
                actor=actor,
                scope=scope,
                system=system,
                source=upload,
                dry_run=options.validated_data["dry_run"],
                budget=settings.IMPORT_MAX_EMBED_CHARS,
                max_total=settings.IMPORT_MAX_REQUEST_BYTES,
            )
        return render(SourceImportOut.of(scope=scope.public_id, report=report))
