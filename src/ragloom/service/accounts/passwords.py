"""Password hashing with argon2id (argon2-cffi's defaults: RFC 9106's low-memory profile).

Only the hash is stored. A hash made with older parameters is re-hashed at the next sign-in
(:func:`needs_rehash`). Checking against a dummy hash when there is no account keeps the time an
unknown e-mail address takes the same as a wrong password's.
"""

from __future__ import annotations

from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from ragloom.errors import InvalidRequestError

MIN_LENGTH = 8
MAX_LENGTH = 1024

_hasher = PasswordHasher()


def check_strength(password: str) -> None:
    """Refuse a password too short or too long (said without repeating it)."""
    if len(password) < MIN_LENGTH:
        raise InvalidRequestError(f"password: at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise InvalidRequestError(f"password: at most {MAX_LENGTH} characters")
    if not password.strip():
        raise InvalidRequestError("password: not only spaces")


def hash_password(password: str) -> str:
    check_strength(password)
    return _hasher.hash(password)


@lru_cache(maxsize=1)
def _dummy() -> str:
    return _hasher.hash("not a password of anybody")


def verify(stored: str | None, password: str) -> bool:
    """The password matches the stored hash; with no hash, False after the same work."""
    if len(password) > MAX_LENGTH:
        return False
    try:
        return _hasher.verify(stored or _dummy(), password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    return _hasher.check_needs_rehash(stored)
