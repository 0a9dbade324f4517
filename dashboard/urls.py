from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.i18n import set_language

import zeromemory.core.converters  # noqa: F401 - registers the id and username converters
from dashboard.views import (
    account,
    activity,
    exports,
    ingest,
    insights,
    memories,
    review,
    rules,
    scopes,
    tokens,
)

app_name = "dashboard"

urlpatterns = [
    path("", memories.memory_list, name="home"),
    path("remember/", memories.remember, name="remember"),
    path("memories/<id:memory_id>/", memories.memory_detail, name="memory"),
    path("memories/<id:memory_id>/edit/", memories.memory_edit, name="memory_edit"),
    path("memories/<id:memory_id>/forget/", memories.memory_forget, name="memory_forget"),
    path("memories/<id:memory_id>/restore/", memories.memory_restore, name="memory_restore"),
    path("memories/<id:memory_id>/links/", memories.memory_link, name="memory_link"),
    path(
        "memories/<id:memory_id>/links/<id:link_id>/remove/",
        memories.memory_unlink,
        name="memory_unlink",
    ),
    path("scopes/", scopes.scope_list, name="scopes"),
    path("scopes/<id:scope_id>/", scopes.scope_detail, name="scope"),
    path("scopes/<id:scope_id>/rename/", scopes.scope_rename, name="scope_rename"),
    path("scopes/<id:scope_id>/delete/", scopes.scope_delete, name="scope_delete"),
    path("scopes/<id:scope_id>/leave/", scopes.scope_leave, name="scope_leave"),
    path("scopes/<id:scope_id>/members/", scopes.member_add, name="member_add"),
    path("scopes/<id:scope_id>/exports/", exports.export_start, name="export_start"),
    path("scopes/<id:scope_id>/exports/<id:job_id>/", exports.export_progress, name="export"),
    path(
        "scopes/<id:scope_id>/exports/<id:job_id>/download/",
        exports.export_download,
        name="export_download",
    ),
    path(
        "scopes/<id:scope_id>/members/<username:username>/role/",
        scopes.member_role,
        name="member_role",
    ),
    path(
        "scopes/<id:scope_id>/members/<username:username>/remove/",
        scopes.member_remove,
        name="member_remove",
    ),
    path("activity/", activity.activity, name="activity"),
    path("insights/", insights.insights_list, name="insights_list"),
    path("insights/<id:scope_id>/", insights.insights, name="insights"),
    path("ingest/", ingest.ingest_list, name="ingest"),
    path("ingest/<id:chunk_id>/retry/", ingest.ingest_retry, name="ingest_retry"),
    path("review/", review.review_list, name="review"),
    path("review/<id:conflict_id>/resolve/", review.review_resolve, name="review_resolve"),
    path("rules/", rules.rule_list, name="rules"),
    path("rules/<id:rule_id>/approve/", rules.rule_approve, name="rule_approve"),
    path("rules/<id:rule_id>/reject/", rules.rule_reject, name="rule_reject"),
    path("rules/<id:rule_id>/move/", rules.rule_move, name="rule_move"),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/<id:token_id>/revoke/", tokens.token_revoke, name="token_revoke"),
    path("login/", account.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("signup/", account.signup, name="signup"),
    path("account/", account.account_page, name="account"),
    path("account/delete/", account.account_delete, name="account_delete"),
    path("password/", account.PasswordChangeView.as_view(), name="password_change"),
    path("password/confirm/", account.password_confirm, name="password_confirm"),
    path("password/done/", account.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("language/", set_language, name="set_language"),
]
