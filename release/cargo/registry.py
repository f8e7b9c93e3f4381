"""A Cargo sparse registry on loopback, the rehearsal's stand-in for crates.io: the index and the
.crate files under one folder, and the publish API (`PUT /api/v1/crates/new`) that `cargo publish`
uses, so publishing is cargo's own command.

    python release/cargo/registry.py ROOT --token TOKEN

It binds 127.0.0.1 on a free port and prints `registry listening on http://127.0.0.1:PORT`; the
index is `sparse+http://127.0.0.1:PORT/index/`. Stop it with SIGTERM.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CRATES_IO = "https://github.com/rust-lang/crates.io-index"
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


def index_path(name: str) -> Path:
    """Where a crate's index file goes (Cargo's layout: `1/a`, `2/ab`, `3/a/abc`, `ab/cd/abcd`)."""
    lower = name.lower()
    if len(lower) <= 2:
        return Path(str(len(lower))) / lower
    if len(lower) == 3:
        return Path("3") / lower[0] / lower
    return Path(lower[:2]) / lower[2:4] / lower


def index_line(metadata: dict[str, Any], crate: bytes) -> dict[str, Any]:
    """The index entry of a published version, from the metadata `cargo publish` sends."""
    deps = [
        {
            "name": dep.get("explicit_name_in_toml") or dep["name"],
            "req": dep["version_req"],
            "features": dep.get("features", []),
            "optional": dep.get("optional", False),
            "default_features": dep.get("default_features", True),
            "target": dep.get("target"),
            "kind": dep.get("kind", "normal"),
            "registry": dep.get("registry"),
            **({"package": dep["name"]} if dep.get("explicit_name_in_toml") else {}),
        }
        for dep in metadata.get("deps", [])
    ]
    features: dict[str, list[str]] = metadata.get("features", {})
    weak = {name for name, values in features.items() if any(v.startswith("dep:") for v in values)}
    plain = {name: values for name, values in features.items() if name not in weak}
    line: dict[str, Any] = {
        "name": metadata["name"],
        "vers": metadata["vers"],
        "deps": deps,
        "cksum": hashlib.sha256(crate).hexdigest(),
        "features": plain,
        "yanked": False,
        "links": metadata.get("links"),
    }
    if plain != features:
        line["features2"] = {name: values for name, values in features.items() if name not in plain}
        line["v"] = 2
    if metadata.get("rust_version"):
        line["rust_version"] = metadata["rust_version"]
    return line


def publish(root: Path, body: bytes) -> dict[str, Any]:
    """Stores one `cargo publish` upload: its .crate and its index line. Raises ValueError."""
    size = int.from_bytes(body[:4], "little")
    metadata = json.loads(body[4 : 4 + size])
    start = 4 + size
    crate_size = int.from_bytes(body[start : start + 4], "little")
    crate = body[start + 4 : start + 4 + crate_size]
    if len(crate) != crate_size:
        raise ValueError("the upload ends before its .crate does")
    name, version = metadata["name"], metadata["vers"]
    if not NAME.match(name):
        raise ValueError(f"{name!r} is not a crate name")
    for required in ("description", "license"):
        licensed = required == "license" and metadata.get("license_file")
        if not metadata.get(required) and not licensed:
            raise ValueError(f"missing or empty metadata fields: {required}")
    index = root / "index" / index_path(name)
    lines = index.read_text().splitlines() if index.exists() else []
    if any(json.loads(existing)["vers"] == version for existing in lines):
        raise ValueError(f"crate version `{version}` is already uploaded")
    stored = root / "crates" / name / f"{name}-{version}.crate"
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_bytes(crate)
    index.parent.mkdir(parents=True, exist_ok=True)
    with index.open("a") as out:
        out.write(json.dumps(index_line(metadata, crate), separators=(",", ":")) + "\n")
    return {"warnings": {"invalid_categories": [], "invalid_badges": [], "other": []}}


class Registry(BaseHTTPRequestHandler):
    root: Path
    token: str
    base: str

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/index/config.json":
            config = {"dl": f"{self.base}/api/v1/crates", "api": self.base}
            self._send(200, json.dumps(config).encode())
        elif path.startswith("/index/"):
            self._file(self.root / "index" / path.removeprefix("/index/"))
        elif match := re.fullmatch(r"/api/v1/crates/([^/]+)/([^/]+)/download", path):
            name, version = match.groups()
            self._file(self.root / "crates" / name / f"{name}-{version}.crate")
        else:
            self._send(404, b"not found")

    def do_PUT(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/api/v1/crates/new":
            self._send(404, b"not found")
        elif self.headers.get("Authorization") != self.token:
            self._error(403, "this registry wants the rehearsal's token")
        else:
            try:
                self._send(200, json.dumps(publish(self.root, body)).encode())
            except (ValueError, KeyError, json.JSONDecodeError) as refused:
                self._error(400, str(refused))

    def _file(self, path: Path) -> None:
        resolved = path.resolve()
        if self.root.resolve() in resolved.parents and resolved.is_file():
            self._send(200, resolved.read_bytes())
        else:
            self._send(404, b"not found")

    def _error(self, status: int, detail: str) -> None:
        self._send(status, json.dumps({"errors": [{"detail": detail}]}).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"registry: {format % args}\n")


def main(argv: list[str]) -> int:
    parsing = argparse.ArgumentParser(
        prog="release/cargo/registry.py", description=__doc__.split("\n\n")[0]
    )
    parsing.add_argument("root", type=Path, help="the folder the index and .crate files live in")
    parsing.add_argument("--token", required=True, help="the token `cargo publish` must send")
    asked = parsing.parse_args(argv)
    Registry.root = asked.root
    Registry.token = asked.token
    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    Registry.base = f"http://127.0.0.1:{server.server_port}"
    print(f"registry listening on {Registry.base}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
