"""Secrets at rest: encrypted with the server's secret key (Fernet: AES-128-CBC + HMAC-SHA256).

The key is ``settings.secret_key`` when set (any string: it is stretched to a Fernet key with
SHA-256), else a random key created once in the data directory as ``secret.key`` (mode 0600).
What is encrypted with one key cannot be read with another: :func:`decrypt` then says so.
"""

from __future__ import annotations

import base64
import hashlib
import os

from cryptography.fernet import Fernet, InvalidToken

from ragloom.config import Settings
from ragloom.errors import ConfigError
from ragloom.filemodes import PRIVATE_FILE, make_private_dir

KEY_FILE = "secret.key"


def _key(settings: Settings) -> bytes:
    if settings.secret_key is not None:
        digest = hashlib.sha256(settings.secret_key.get_secret_value().encode()).digest()
        return base64.urlsafe_b64encode(digest)
    make_private_dir(settings.home)
    path = settings.home / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        key = path.read_bytes().strip()
        if not key:
            raise ConfigError(f"{path} is empty: restore the server's secret key") from None
        return key
    key = Fernet.generate_key()
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


def encrypt(settings: Settings, plain: str) -> str:
    """``plain`` encrypted with the server's key ("" stays "")."""
    if not plain:
        return ""
    return Fernet(_key(settings)).encrypt(plain.encode()).decode("ascii")


def decrypt(settings: Settings, token: str) -> str:
    """The plain text of :func:`encrypt`'s result; ``ConfigError`` when the server's key changed."""
    if not token:
        return ""
    try:
        return Fernet(_key(settings)).decrypt(token.encode("ascii")).decode()
    except (InvalidToken, ValueError):
        raise ConfigError("a stored secret cannot be decrypted with this server's secret key "
                          "(RAGLOOM_SECRET_KEY or secret.key changed): set it again") from None
