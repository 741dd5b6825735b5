"""What the fakes of hosted services share: an HTTP server on 127.0.0.1 (a free port) in a background
thread, as a context manager. A fake names its request handler class (:meth:`LoopbackFake.handler`); the
handler sees the fake as ``self.fake``."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackFake:
    """See the module docstring."""

    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>`` while the server runs."""
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> Self:
        bound = type("Handler", (self.handler(),), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), bound)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None and self._thread is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
