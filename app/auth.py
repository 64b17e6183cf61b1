"""Bearer authentication: HS256 JWTs from a trusted front end, static API keys, a dev token."""

import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jwt

from app.errors import Forbidden, Unauthenticated

if TYPE_CHECKING:
    from app.config import Settings

SCOPE_SEARCH = "search"
SCOPE_INDEX = "index"


@dataclass(frozen=True)
class Principal:
    user: str
    groups: tuple[str, ...] = ()
    scopes: frozenset[str] = frozenset()

    def require(self, scope: str) -> None:
        if scope not in self.scopes:
            raise Forbidden(f"this token lacks the '{scope}' scope")


def _principal_from_claims(claims: dict[str, Any], source: str) -> Principal:
    user = claims.get("sub")
    if not isinstance(user, str) or not user:
        raise Unauthenticated(f"{source} has no 'sub' (user id)")
    groups = claims.get("groups") or []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise Unauthenticated(f"{source}: 'groups' must be a list of strings")
    scope = claims.get("scope") or ""
    if not isinstance(scope, str):
        raise Unauthenticated(f"{source}: 'scope' must be a space-separated string")
    return Principal(user=user, groups=tuple(groups), scopes=frozenset(scope.split()))


class Authenticator:
    """Turns a bearer token into a Principal, or raises 401."""

    def __init__(self, jwt_secret: str | None, api_keys: dict[str, Principal]) -> None:
        self._jwt_secret = jwt_secret
        self._api_keys = api_keys

    @property
    def configured(self) -> bool:
        return bool(self._jwt_secret or self._api_keys)

    def add_key(self, key: str, principal: Principal) -> None:
        self._api_keys[key] = principal

    def authenticate(self, token: str | None) -> Principal:
        """The bearer token (the header already parsed) -> who it is."""
        token = (token or "").strip()
        if not token:
            raise Unauthenticated("missing Authorization: Bearer <token>")
        key_principal = self._match_key(token)
        if key_principal is not None:
            return key_principal
        if self._jwt_secret and token.count(".") == 2:
            return _decode_jwt(token, self._jwt_secret)
        raise Unauthenticated("invalid token")

    def _match_key(self, token: str) -> Principal | None:
        for key, principal in self._api_keys.items():
            if secrets.compare_digest(key.encode(), token.encode()):
                return principal
        return None


def _decode_jwt(token: str, secret: str) -> Principal:
    try:
        claims = jwt.decode(
            token, secret, algorithms=["HS256"], options={"require": ["sub", "exp"]}
        )
    except jwt.ExpiredSignatureError as exc:
        raise Unauthenticated("token expired") from exc
    except jwt.PyJWTError as exc:
        raise Unauthenticated(f"invalid token: {exc}") from exc
    return _principal_from_claims(claims, "token")


class ApiKeysFileError(ValueError):
    """SEARCH_API_KEYS_FILE cannot be used: the service must not start with it."""


def load_api_keys(path: Path) -> dict[str, Principal]:
    """`{"<key>": {"sub": "alice", "groups": ["eng"], "scope": "search index"}}`."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ApiKeysFileError(f"cannot read API keys file {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ApiKeysFileError(f"API keys file {path} must hold a JSON object")
    keys: dict[str, Principal] = {}
    for index, (key, claims) in enumerate(raw.items()):
        where = f"API keys file {path}, entry {index}"
        if not key or not isinstance(claims, dict):
            raise ApiKeysFileError(f"{where}: expected a non-empty key mapped to an object")
        try:
            keys[key] = _principal_from_claims(claims, where)
        except Unauthenticated as exc:
            raise ApiKeysFileError(exc.message) from exc
    return keys


DEV_PRINCIPAL = Principal(
    user="dev", groups=("demo",), scopes=frozenset({SCOPE_SEARCH, SCOPE_INDEX})
)


def new_dev_token() -> str:
    return "dev-" + secrets.token_urlsafe(24)


def build_authenticator(settings: "Settings") -> Authenticator:
    keys = load_api_keys(settings.api_keys_file) if settings.api_keys_file else {}
    return Authenticator(settings.jwt_secret, keys)
