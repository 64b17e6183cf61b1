"""App passwords encrypted at rest: Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`)
under a key derived from SEARCH_SECRET_KEY. A password is decrypted only to open a client."""

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken

from app.errors import SecretKeyMissing

MIN_SECRET_CHARS = 16


class Vault:
    def __init__(self, secret_key: str | None) -> None:
        self._fernet: Fernet | None = None
        if secret_key:
            if len(secret_key) < MIN_SECRET_CHARS:
                raise ValueError(f"SEARCH_SECRET_KEY: at least {MIN_SECRET_CHARS} characters")
            digest = hashlib.sha256(secret_key.encode()).digest()
            self._fernet = Fernet(base64.urlsafe_b64encode(digest))

    def seal(self, password: str) -> str:
        if self._fernet is None:
            raise SecretKeyMissing("SEARCH_SECRET_KEY is not set: no app password can be stored")
        return self._fernet.encrypt(password.encode()).decode()

    def open(self, sealed: str) -> str | None:
        """The password, or None when the key is missing or is not the one that sealed it."""
        if self._fernet is None:
            return None
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            return None
