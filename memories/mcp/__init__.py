"""The MCP surface: the same services as the REST API, as tools for agents.

`contract` holds the text agents read; `tools` the tools and `build_server()`; `server` how a call
runs (actor, ORM thread, answers and error codes; the answers are `memories.schemas`); `auth`
the bearer-token door and the credential each call runs with; `http` the streamable-HTTP endpoint
that `zeromemory.asgi` mounts at /mcp. `manage.py mcp_stdio` serves the same tools over stdio.
"""
