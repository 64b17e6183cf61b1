"""The connector's HTTP shapes (API.md, "Additions: the Nextcloud connector")."""

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.ingest.models import SyncStatus

if TYPE_CHECKING:
    from app.nextcloud.connector import UserFigures

UserState = Literal["syncing", "ok", "failing", "revoked"]


class ConnectUser(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"login_name": "alice", "app_password": "xxxxx-xxxxx"}]},
    )

    login_name: str = Field(min_length=1, max_length=256, description="Nextcloud login name.")
    app_password: str = Field(
        min_length=1, max_length=512, description="An app password of that login (stored sealed)."
    )


class ConnectedUser(BaseModel):
    user_id: str = Field(description="Nextcloud's user id (under LDAP it differs from the login).")
    state: UserState


class UserLine(BaseModel):
    user_id: str
    state: UserState
    last_error: str | None = Field(default=None, description="Why the last tick failed.")
    files_seen: int
    indexed: int
    pending: int = Field(description="Changed files found, not yet read.")
    skipped: dict[str, int] = Field(description="Files not indexed, by reason.")
    last_tick: float | None = Field(description="Unix seconds of the last tick's end.")
    lag_seconds: float = Field(description="Age of the oldest change not yet searchable.")

    @classmethod
    def of(cls, figures: "UserFigures") -> "UserLine":
        return cls.model_validate(figures, from_attributes=True)


class ConnectedUsers(BaseModel):
    users: list[UserLine]


class SyncRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str | None = Field(default=None, description="One user; every user without it.")


class SyncStarted(BaseModel):
    users: list[str] = Field(description="The users whose tick starts now.")


class WebhookAnswer(BaseModel):
    queued: int | None = Field(default=None, description="Users whose sync looks now.")
    ignored: bool | None = Field(default=None, description="An event the connector skips.")


class StatusWithConnector(SyncStatus):
    """`GET /api/v1/vector-sync/status` with the connector's users (absent when it is off)."""

    nextcloud: ConnectedUsers | None = None
