"""A real WebDAV server for the webdav connector's tests: wsgidav (a dev dependency) serving a folder the
test writes, over cheroot in a thread on loopback, with HTTP basic auth by its simple domain controller
(one user, :data:`USER` / :data:`PASSWORD`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

USER, PASSWORD = "alice", "s3cret-dav"


@dataclass
class DavServer:
    """A running server: ``url`` is the collection ``/dav/`` serving ``root``."""

    root: Path
    url: str


@contextmanager
def dav_server(root: Path) -> Iterator[DavServer]:
    """Serve ``root`` at ``http://127.0.0.1:<port>/dav/`` until the block ends."""
    from cheroot import wsgi
    from wsgidav.fs_dav_provider import FilesystemProvider
    from wsgidav.wsgidav_app import WsgiDAVApp

    config = {
        "host": "127.0.0.1",
        "port": 0,
        "provider_mapping": {"/dav": FilesystemProvider(str(root))},
        "simple_dc": {"user_mapping": {"*": {USER: {"password": PASSWORD}}}},
        "http_authenticator": {"domain_controller": None, "accept_basic": True, "accept_digest": False,
                               "default_to_digest": False},
        "verbose": 0,
        "logging": {"enable": False},
        "dir_browser": {"enable": False},
        "property_manager": True,
        "lock_storage": True,
    }
    app = WsgiDAVApp(config)
    logging.getLogger("wsgidav").setLevel(logging.ERROR)
    server = wsgi.Server(("127.0.0.1", 0), app, numthreads=4)
    server.expiration_interval = 0.05  # how often its loop looks up: stopping waits for one tick
    server.prepare()
    port = server.bind_addr[1]
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield DavServer(root, f"http://127.0.0.1:{port}/dav/")
    finally:
        server.stop()
        thread.join(5)
