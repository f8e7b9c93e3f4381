"""MkDocs hooks: the pages that a library can write, written from it (the environment
variables every command reads, from the click commands themselves)."""

from __future__ import annotations

from typing import Any

ENVIRONMENT_MARKER = "<!-- environment variables, from the commands -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    if ENVIRONMENT_MARKER not in markdown:
        return markdown
    return markdown.replace(ENVIRONMENT_MARKER, environment_table())


def environment_table() -> str:
    """One row per variable: the commands that read it and the option it stands for."""
    from stub.cli import command
    from stub.conformance.commands import command as conformance
    from stub.upstream.commands import record, verify

    read: dict[str, list[str]] = {}
    for name, each in (
        ("svc-stub", command),
        ("svc-stub record", record),
        ("svc-stub verify", verify),
        ("svc-stub conformance", conformance),
    ):
        for parameter in each.params:
            variable = getattr(parameter, "envvar", None)
            if isinstance(variable, str):
                read.setdefault(variable, []).append(f"`{name} {parameter.opts[0]}`")
    rows = [
        f"| `{variable}` | {', '.join(options)} |" for variable, options in sorted(read.items())
    ]
    return "\n".join(["| Variable | Stands for |", "|---|---|", *rows])
