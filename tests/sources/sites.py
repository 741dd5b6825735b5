"""A web site served by Python's http.server on loopback, from a folder the test writes (its pages can
change between syncs), with what a site may have: robots.txt, sitemap.xml, ETags on files."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _Handler(SimpleHTTPRequestHandler):
    """Files of the folder; every response of a file carries an ETag (its content's hash); a request
    whose path is in ``server.fail`` gets a 503; every request is counted in ``server.requests``."""

    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def send_head(self) -> Any:
        path = self.path.split("?", 1)[0]
        self.server.requests.append((self.command, path))
        if path in self.server.fail:
            self.send_error(503)
            return None
        return super().send_head()

    def end_headers(self) -> None:
        local = Path(self.translate_path(self.path))
        if local.is_file():
            self.send_header("ETag", '"' + hashlib.sha256(local.read_bytes()).hexdigest()[:16] + '"')
        super().end_headers()


@contextmanager
def web_site(root: Path) -> Iterator[Any]:
    """Serve ``root`` on 127.0.0.1; yields the server (``.url``, ``.requests``, ``.fail``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    server.requests = []  # type: ignore[attr-defined]
    server.fail = set()  # type: ignore[attr-defined]
    server.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)  # shutdown waits one poll
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def page(title: str, body: str, *, links: list[str] = (), head: str = "") -> str:  # type: ignore[assignment]
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (f"<!doctype html><html><head><title>{title}</title>{head}</head><body>"
            f"<nav><ul>{anchors}</ul></nav><main><h1>{title}</h1><p>{body}</p></main></body></html>")
