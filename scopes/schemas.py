"""One pydantic model per answer of tenancy: the caller, scopes, members, tokens. REST renders
them and MCP returns them (`list_scopes`); the OpenAPI document and the MCP output schema come from
these definitions."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from scopes.models import ApiToken, Membership, Role


class ScopeOut(BaseModel):
    id: str
    kind: str
    name: str
    slug: str
    owner: str
    role: str | None = Field(description="The caller's role: reader, writer or admin.")
    writable: bool = Field(description="Whether the caller may write memories here.")
    created_at: datetime


class ScopeListOut(BaseModel):
    results: list[ScopeOut]


class ScopesOut(BaseModel):
    """The MCP tool list_scopes."""

    scopes: list[ScopeOut]


class TokenSummaryOut(BaseModel):
    id: str
    name: str
    read_only: bool


class MeOut(BaseModel):
    username: str
    email: str
    is_staff: bool
    token: TokenSummaryOut | None
    scopes: list[ScopeOut]


class MemberOut(BaseModel):
    username: str
    role: str
    joined_at: datetime

    @classmethod
    def of(cls, membership: Membership) -> MemberOut:
        return cls(
            username=membership.user.get_username(),
            role=Role(membership.role).slug,
            joined_at=membership.created_at,
        )


class MemberListOut(BaseModel):
    results: list[MemberOut]


class TokenOut(BaseModel):
    id: str
    name: str
    prefix: str
    read_only: bool
    scopes: list[str] | None = Field(description="The scopes it is restricted to, or null.")
    active: bool
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None

    @classmethod
    def of(cls, row: ApiToken, **extra: str) -> TokenOut:
        return cls(
            id=row.public_id,
            name=row.name,
            prefix=row.prefix,
            read_only=row.read_only,
            scopes=[scope.public_id for scope in row.restricted_scopes.all()]
            if row.scope_restricted
            else None,
            active=row.is_active(),
            created_at=row.created_at,
            last_used_at=row.last_used_at,
            expires_at=row.expires_at,
            revoked_at=row.revoked_at,
            **extra,
        )


class TokenCreatedOut(TokenOut):
    token: str = Field(description="The secret. Shown once; store it now.")


class TokenListOut(BaseModel):
    results: list[TokenOut]
