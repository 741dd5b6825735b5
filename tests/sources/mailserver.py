"""A real IMAP server for the imap connector's tests: Debian's dovecot (``dovecot-imapd``, installed by
``.ci/run``) started in the foreground on a free loopback port with a configuration of its own in a
temporary folder — users in a passwd-file (:data:`USER`, and :data:`UTF8_USER` whose password is not
ASCII), maildirs in the folder, no TLS, plaintext login allowed — and stopped when the block ends. Run
as root, dovecot's login and mail processes take the package's unprivileged users (it refuses root for
them); run as anyone else, that user for all. Messages are put in over IMAP (``APPEND``), as a mail
client would. After a failed login dovecot makes the next logins from the address wait a few seconds
(its auth penalty): a test logs in wrongly last.

Tests that use it skip when ``dovecot`` is not on PATH (:data:`DOVECOT`)."""

from __future__ import annotations

import contextlib
import grp
import imaplib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

DOVECOT = shutil.which("dovecot") or (os.path.exists("/usr/sbin/dovecot") and "/usr/sbin/dovecot") or None
needs_dovecot = pytest.mark.skipif(DOVECOT is None, reason="dovecot is not installed (apt-get install "
                                                            "dovecot-imapd; .ci/run installs it)")
USER, PASSWORD = "alice@example.com", "s3cret-imap"
UTF8_USER, UTF8_PASSWORD = "bob@example.com", "pässwört-ü"  # a password LOGIN cannot carry (SASL PLAIN can)


@dataclass
class MailServer:
    """A running dovecot: ``port`` on 127.0.0.1, the user :data:`USER` / :data:`PASSWORD` (and :data:`UTF8_USER`)."""

    host: str
    port: int
    log: Path

    def client(self) -> imaplib.IMAP4:
        conn = imaplib.IMAP4(self.host, self.port, timeout=10)
        conn.login(USER, PASSWORD)
        return conn

    def append(self, folder: str, message: bytes) -> None:
        """Put ``message`` in ``folder`` (made when missing)."""
        conn = self.client()
        try:
            conn.create(f'"{folder}"')  # NO when it exists
            typ, data = conn.append(f'"{folder}"', None, None, message)
            assert typ == "OK", data
        finally:
            conn.logout()

    def delete(self, folder: str, subject: str) -> None:
        """Expunge the messages of ``folder`` with this subject."""
        conn = self.client()
        try:
            conn.select(f'"{folder}"')
            typ, data = conn.uid("SEARCH", "SUBJECT", f'"{subject}"')
            for uid in data[0].split():
                conn.uid("STORE", uid, "+FLAGS", "(\\Deleted)")
            conn.expunge()
        finally:
            conn.logout()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(root: Path, port: int) -> str:
    if os.geteuid() == 0:  # dovecot refuses root for its login and mail processes
        internal, login, mail = "dovecot", "dovenull", "dovecot"
    else:
        internal = login = mail = pwd.getpwuid(os.geteuid()).pw_name
    group = grp.getgrgid(pwd.getpwnam(internal).pw_gid).gr_name
    mail_group = grp.getgrgid(pwd.getpwnam(mail).pw_gid).gr_name
    return f"""
protocols = imap
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
default_internal_user = {internal}
default_internal_group = {group}
default_login_user = {login}
first_valid_uid = 0
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/users
}}
userdb {{
  driver = static
  args = uid={mail} gid={mail_group} home={root}/home/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
  chroot =
}}
service anvil {{
  chroot =
}}
"""


@contextmanager
def mail_server() -> Iterator[MailServer]:
    """dovecot on a free loopback port until the block ends (its log is named when it does not start)."""
    assert DOVECOT is not None
    root = Path(tempfile.mkdtemp(prefix="ragloom-dovecot-"))  # not pytest's tmp: dovecot's users must enter it
    root.chmod(0o755)
    port = _free_port()
    (root / "users").write_text(f"{USER}:{{PLAIN}}{PASSWORD}\n{UTF8_USER}:{{PLAIN}}{UTF8_PASSWORD}\n",
                                encoding="utf-8")
    for sub in ("mail", "home"):
        (root / sub).mkdir()
        if os.geteuid() == 0:
            entry = pwd.getpwnam("dovecot")
            os.chown(root / sub, entry.pw_uid, entry.pw_gid)
    (root / "dovecot.conf").write_text(_config(root, port))
    proc = subprocess.Popen([DOVECOT, "-F", "-c", str(root / "dovecot.conf")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                log = (root / "dovecot.log").read_text() if (root / "dovecot.log").exists() else ""
                stderr = proc.stderr.read().decode() if proc.stderr and proc.poll() is not None else ""
                raise RuntimeError(f"dovecot did not start: {stderr}{log}")
            time.sleep(0.05)
        yield MailServer("127.0.0.1", port, root / "dovecot.log")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr is not None:
            proc.stderr.close()
        shutil.rmtree(root, ignore_errors=True)
