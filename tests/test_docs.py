"""The docs stay true to the code: every setting documented, the API reference current, every MCP
tool shown with an example that its schema accepts, every path and link leading somewhere."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from mcp import Client

from memories.mcp.tools import build_server
from zeromemory.api_reference import REFERENCE_PATH, REGENERATE, current_schema, heading_anchor
from zeromemory.api_reference import render as render_reference

ROOT = Path(settings.BASE_DIR)
DOCS = ROOT / "docs"
# The server's own packages: what they read from the environment is configuration.
APP_PACKAGES = ("zeromemory", "scopes", "memories", "dashboard")


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def test_readme_is_the_front_door_of_at_most_250_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move detail into docs/"


# Settings: every variable the server reads is in docs/configuration.md and .env.example.


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "string" assignments, to resolve `os.environ.get(TOKEN_VARIABLE)`."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    names[target.id] = node.value.value
    return names


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def variables_named_in_code() -> dict[str, str]:
    """Each environment variable the app's code reads by name, with the file that reads it."""
    found: dict[str, str] = {}
    for package in APP_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            constants = _constants(tree)
            for node in ast.walk(tree):
                argument = None
                if isinstance(node, ast.Call) and node.args:
                    function = node.func
                    name = getattr(function, "id", None) or getattr(function, "attr", None)
                    reads_environ = name in {"env_str", "env_int", "env_bool", "env_list"} or (
                        name in {"get", "getenv"}
                        and (_is_environ(getattr(function, "value", None)) or name == "getenv")
                    )
                    if reads_environ:
                        argument = node.args[0]
                elif (
                    isinstance(node, ast.Subscript)
                    and _is_environ(node.value)
                    and isinstance(node.ctx, ast.Load)
                ):
                    argument = node.slice
                if argument is None:
                    continue
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    found.setdefault(argument.value, str(path.relative_to(ROOT)))
                elif isinstance(argument, ast.Name) and argument.id in constants:
                    found.setdefault(constants[argument.id], str(path.relative_to(ROOT)))
    return found


# Run in a fresh interpreter: which variables the settings ask for when they load, whatever way
# they name them (a name built at run time included), counting only reads made by the app's code.
RECORD_READS = """
import json, os, sys
root = sys.argv[1]
packages = tuple(os.path.join(root, p) + os.sep for p in sys.argv[2:])
asked = set()
# The standard library's own frames between the caller and the mapping (frozen or not).
STANDARD_LIBRARY = ("/os.py", "<frozen os>", "_collections_abc.py", "<frozen _collections_abc>")

class Recording(type(os.environ)):
    def __getitem__(self, key):
        frame = sys._getframe(1)
        while frame and frame.f_code.co_filename.endswith(STANDARD_LIBRARY):
            frame = frame.f_back
        if frame and frame.f_code.co_filename.startswith(packages):
            asked.add(key)
        return super().__getitem__(key)

os.environ.__class__ = Recording
sys.path.insert(0, root)
os.environ["DJANGO_SETTINGS_MODULE"] = "zeromemory.settings"
import django
django.setup()
print(json.dumps(sorted(asked)))
"""


def variables_read_at_start() -> list[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT), "ZM_TESTING": "true"}
    env["ZM_DATA_DIR"] = str(Path(settings.DATA_DIR))
    result = subprocess.run(
        [sys.executable, "-c", RECORD_READS, str(ROOT), *APP_PACKAGES],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_every_variable_the_server_reads_is_documented_and_in_env_example():
    read = variables_named_in_code()
    for name in variables_read_at_start():
        read.setdefault(name, "zeromemory/settings.py (at start)")
    configuration = (DOCS / "configuration.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", configuration))
    example = {
        line.split("=", 1)[0].strip()
        for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
        if re.match(r"^[A-Z][A-Z0-9_]*=", line)
    }
    assert {"DATABASE_URL", "ZM_SECRET_KEY", "ZM_PUBLIC_URL", "ZM_LOG_LEVEL"} <= set(read)
    missing_docs = [f"{name} (read in {at})" for name, at in read.items() if name not in documented]
    missing_example = [f"{name} (read in {at})" for name, at in read.items() if name not in example]
    assert not missing_docs, f"not in docs/configuration.md: {', '.join(sorted(missing_docs))}"
    assert not missing_example, f"not in .env.example: {', '.join(sorted(missing_example))}"


def _literal_defaults() -> dict[str, object]:
    """Each `env_int("ZM_…", 5)`-like call of the settings whose default is a literal."""
    found: dict[str, object] = {}
    for path in sorted((ROOT / "zeromemory").glob("settings*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id.startswith("env_")
                and len(node.args) >= 2
                and all(isinstance(arg, ast.Constant) for arg in node.args[:2])
            ):
                found[node.args[0].value] = node.args[1].value
    return found


def test_env_example_gives_the_settings_own_defaults():
    """A value `.env.example` sets is the default the server would use without it, where that
    default is written as a literal: copying the file changes nothing until someone edits it."""
    defaults = _literal_defaults()
    assert {"ZM_BULK_NICE", "ZM_WORKER_NICE"} <= set(defaults)
    differ = []
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition("=")
        if not sep or not value or name not in defaults:
            continue
        default = defaults[name]
        if isinstance(default, bool):
            same = value.lower() == str(default).lower()
        elif isinstance(default, int | float):
            same = type(default)(value) == default
        else:
            same = value == default
        if not same:
            differ.append(f"{name}={value} (default {default!r})")
    assert not differ, f".env.example differs from the settings: {', '.join(differ)}"


def test_every_variable_documented_is_still_read_somewhere():
    """A row of docs/configuration.md names a variable some code (the server, its commands, the
    tests) still reads, so a removed setting leaves the page too."""
    configuration = (DOCS / "configuration.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([A-Z][A-Z0-9_]+)`(?:, `([A-Z][A-Z0-9_]+)`)?", configuration, re.M)
    documented = {name for row in rows for name in row if name}
    code = "\n".join(
        path.read_text(encoding="utf-8")
        for folder in (*APP_PACKAGES, "tests")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "test_docs.py"
    )
    unread = sorted(name for name in documented if f'"{name}"' not in code)
    assert not unread, f"docs/configuration.md documents variables nothing reads: {unread}"


def test_every_variable_the_watcher_reads_is_on_its_page():
    watcher = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "watcher").rglob("*.py"))
    read = set(re.findall(r"\"((?:ZM|XDG)_[A-Z0-9_]+)\"", watcher))
    page = (DOCS / "watcher.md").read_text(encoding="utf-8")
    assert {"ZM_URL", "ZM_TOKEN", "ZM_WATCH_CONFIG"} <= read
    missing = sorted(name for name in read if f"`{name}`" not in page)
    assert not missing, f"the watcher reads variables docs/watcher.md does not list: {missing}"


# The REST API reference, generated from the OpenAPI schema.


def test_api_reference_is_generated_from_the_current_schema():
    expected = render_reference(current_schema())
    assert render_reference(current_schema()) == expected, "the rendering is not deterministic"
    committed = REFERENCE_PATH.read_text(encoding="utf-8") if REFERENCE_PATH.exists() else ""
    assert committed == expected, (
        f"docs/api.md is stale (the OpenAPI schema changed): run `{REGENERATE}` and commit "
        "docs/api.md"
    )


def test_api_reference_names_every_route_of_the_schema():
    schema = current_schema()
    reference = REFERENCE_PATH.read_text(encoding="utf-8")
    for path, operations in schema["paths"].items():
        for method in operations:
            if method in {"get", "post", "put", "patch", "delete"}:
                assert f"### {method.upper()} {path}\n" in reference


# MCP: every tool in docs/mcp.md's table, with an example its input schema accepts.


async def _tools() -> dict[str, dict]:
    async with Client(build_server()) as client:
        return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}


def documented_tool_examples() -> dict[str, str]:
    """docs/mcp.md's tool table: `| \\`tool\\` | \\`{json}\\` |` rows."""
    text = (DOCS / "mcp.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `([a-z_]+)` \| `(\{.*\})` \|", text, flags=re.MULTILINE))


@pytest.mark.django_db
def test_every_mcp_tool_is_documented_with_an_example_its_schema_accepts():
    tools = async_to_sync(_tools)()
    examples = documented_tool_examples()
    missing = sorted(set(tools) - set(examples))
    assert not missing, f"MCP tools without an example row in docs/mcp.md: {', '.join(missing)}"
    unknown = sorted(set(examples) - set(tools))
    assert not unknown, f"docs/mcp.md shows tools the server does not have: {', '.join(unknown)}"
    for name, example in examples.items():
        arguments = json.loads(example)
        properties = set(tools[name].get("properties", {}))
        required = set(tools[name].get("required", []))
        assert set(arguments) <= properties, f"{name}: {set(arguments) - properties} unknown"
        assert required <= set(arguments), f"{name}: example lacks {required - set(arguments)}"


# Architecture: the files each behaviour lives in exist.


def test_every_path_architecture_names_exists():
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    paths = re.findall(r"^\s*- `([\w/.-]+\.\w+)`", text, flags=re.MULTILINE)
    assert len(paths) >= 10, paths
    missing = [path for path in paths if not (ROOT / path).is_file()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


# Links: every relative link in README.md and docs/ leads to a file, and an anchor to a heading.


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        match = None if fence else re.match(r"^#{1,6} (.+?)\s*#*$", line)
        if match:
            anchor = heading_anchor(match.group(1).replace("`", ""))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            result.add(anchor if count == 0 else f"{anchor}-{count}")
    return result


def relative_links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    return [link for link in links if not re.match(r"^[a-z]+:", link)]


def test_every_relative_link_resolves():
    broken = []
    for path in markdown_files():
        for link in relative_links(path):
            target, _, anchor = link.partition("#")
            file = (path.parent / target).resolve() if target else path
            if not file.exists():
                broken.append(f"{path.relative_to(ROOT)}: {link} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{path.relative_to(ROOT)}: {link} (no such heading)")
    assert not broken, "\n".join(broken)
