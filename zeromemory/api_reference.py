"""docs/api.md, the REST API reference, rendered from the OpenAPI schema drf-spectacular builds.

The schema is the one `/api/schema/` serves, so the reference cannot say what the code does not.
The rendering is deterministic: routes in path order, methods in a fixed order, schemas by name,
fields in the order the schema gives them. `python manage.py api_reference` writes the file;
`tests/test_docs.py` renders it again and fails when the committed file differs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.conf import settings

REFERENCE_PATH = Path(settings.BASE_DIR) / "docs" / "api.md"
REGENERATE = "python manage.py api_reference"

METHODS = ("get", "post", "put", "patch", "delete")
CREDENTIALS = {"bearerAuth": "bearer token", "cookieAuth": "session cookie and CSRF token"}


def current_schema() -> dict[str, Any]:
    """The OpenAPI document, as `manage.py spectacular` and `/api/schema/` produce it."""
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def heading_anchor(text: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _cell(text: str) -> str:
    """Text fit for one table cell: one line, pipes escaped."""
    lines = [line.strip().lstrip("* ").strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines).replace("|", "\\|")


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _schema_link(name: str) -> str:
    return f"[`{name}`](#{heading_anchor(name)})"


def type_of(schema: dict[str, Any]) -> str:
    """A field's type in words, with links to the named schemas it uses."""
    if "$ref" in schema:
        return _schema_link(_ref_name(schema["$ref"]))
    for combinator, joiner in (("allOf", " and "), ("oneOf", " or "), ("anyOf", " or ")):
        if combinator in schema:
            text = joiner.join(type_of(part) for part in schema[combinator])
            break
    else:
        kind = schema.get("type", "any")
        if kind == "array":
            text = f"array of {type_of(schema.get('items', {}))}"
        elif kind == "object" and isinstance(schema.get("additionalProperties"), dict):
            text = f"object of {type_of(schema['additionalProperties'])}"
        else:
            text = str(kind)
            if "format" in schema:
                text += f" ({schema['format']})"
    if "enum" in schema:
        text += ": " + ", ".join(f"`{value}`" for value in schema["enum"] if value is not None)
    if schema.get("nullable"):
        text += ", or null"
    return text


def _limits(schema: dict[str, Any]) -> str:
    parts = []
    if schema.get("minLength") == 1 and "enum" not in schema:
        parts.append("not empty")
    # A pydantic model's `X | None` is an anyOf whose X branch holds the limits.
    branches = [schema]
    branches += [part for part in schema.get("anyOf", []) if part.get("type") not in ("null", None)]
    for key, label in (
        ("minLength", "at least {} characters"),
        ("maxLength", "at most {} characters"),
        ("minimum", "≥ {}"),
        ("maximum", "≤ {}"),
        ("minItems", "at least {} items"),
        ("maxItems", "at most {} items"),
        ("pattern", "matches `{}`"),
    ):
        for branch in branches:
            if key in branch and not (key == "minLength" and branch[key] == 1):
                parts.append(label.format(branch[key]))
    if "default" in schema:
        parts.append(f"default `{json.dumps(schema['default'], ensure_ascii=False)}`")
    if schema.get("readOnly"):
        parts.append("read-only")
    return ", ".join(parts)


def _notes(schema: dict[str, Any]) -> str:
    description = schema.get("description", "")
    if "enum" in schema and description.lstrip().startswith("*"):
        description = ""  # drf-spectacular's list of the choices, which the type already shows
    return _cell("; ".join(part for part in (_limits(schema), description) if part))


def _fields_table(schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    if not properties:
        return [f"Type: {type_of(schema)}."]
    required = set(schema.get("required", []))
    rows = ["| field | type | required | notes |", "|---|---|---|---|"]
    for name, field in properties.items():
        rows.append(
            f"| `{name}` | {_cell(type_of(field))} | {'yes' if name in required else ''} | "
            f"{_notes(field)} |"
        )
    return rows


def _parameters(operation: dict[str, Any]) -> list[str]:
    parameters = operation.get("parameters", [])
    if not parameters:
        return []
    rows = ["| parameter | in | type | required | notes |", "|---|---|---|---|---|"]
    for parameter in parameters:
        schema = dict(parameter.get("schema", {}))
        if parameter.get("description"):
            schema["description"] = parameter["description"]
        rows.append(
            f"| `{parameter['name']}` | {parameter['in']} | {_cell(type_of(schema))} | "
            f"{'yes' if parameter.get('required') else ''} | {_notes(schema)} |"
        )
    return ["", *rows]


def _body(operation: dict[str, Any], components: dict[str, Any]) -> list[str]:
    body = operation.get("requestBody")
    if not body:
        return []
    out: list[str] = []
    for media, content in body.get("content", {}).items():
        schema = content.get("schema", {})
        required = ", required" if body.get("required") else ""
        if "$ref" in schema:
            name = _ref_name(schema["$ref"])
            out += ["", f"Body ({media}{required}): {_schema_link(name)}", ""]
            out += _fields_table(components.get(name, {}))
        else:
            out += ["", f"Body ({media}{required}): {type_of(schema)}."]
    return out


def _responses(operation: dict[str, Any]) -> list[str]:
    out = ["", "Answers:", ""]
    for status, response in sorted(operation.get("responses", {}).items()):
        contents = response.get("content", {})
        if not contents:
            out.append(f"- {status}: {_cell(response.get('description', '')) or 'no body'}")
        description = _cell(response.get("description", ""))
        for media, content in contents.items():
            line = f"- {status} ({media}): {type_of(content.get('schema', {}))}"
            out.append(f"{line}: {description}" if description else line)
    return out


def _credentials(operation: dict[str, Any]) -> str:
    names = []
    for requirement in operation.get("security", []):
        names += [CREDENTIALS.get(name, name) for name in requirement] or ["none"]
    return " or ".join(names) if names else "none"


def render(schema: dict[str, Any]) -> str:
    components = schema.get("components", {}).get("schemas", {})
    operations = [
        (path, method, schema["paths"][path][method])
        for path in sorted(schema["paths"])
        for method in METHODS
        if method in schema["paths"][path]
    ]
    out = [
        "# REST API reference",
        "",
        f"<!-- Generated from the OpenAPI schema by `{REGENERATE}`: do not edit by hand. -->",
        "",
        f"{schema['info']['title']} {schema['info']['version']}: every route of the REST API as "
        "the OpenAPI schema (`/api/schema/`, browsable at `/api/docs/`) describes it, with its "
        "request fields and its answers. Authentication, errors, paging, idempotency and who may "
        "call what are in [the REST overview](rest.md). Every route may also answer the error "
        "envelope (`ErrorBody`) with the codes listed there.",
        "",
        "| method | path | what |",
        "|---|---|---|",
    ]
    for path, method, operation in operations:
        title = f"{method.upper()} {path}"
        out.append(
            f"| {method.upper()} | [`{path}`](#{heading_anchor(title)}) | "
            f"{_cell(operation.get('summary', ''))} |"
        )
    out += ["", "## Routes"]
    for path, method, operation in operations:
        out += ["", f"### {method.upper()} {path}", ""]
        if operation.get("summary"):
            summary = _cell(operation["summary"])
            out.append(summary if summary.endswith((".", "!", "?")) else summary + ".")
        if operation.get("description"):
            out += ["", operation["description"].strip()]
        out += ["", f"Credentials: {_credentials(operation)}."]
        out += _parameters(operation)
        out += _body(operation, components)
        out += _responses(operation)
    out += ["", "## Schemas", "", "Every named request and answer shape, by name."]
    for name in sorted(components):
        component = components[name]
        out += ["", f"### {name}", ""]
        if component.get("description"):
            out += [_cell(component["description"]), ""]
        out += _fields_table(component)
    return "\n".join(out) + "\n"
