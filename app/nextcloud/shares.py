"""Readers from Nextcloud's shares (OCS Share API, apps/files_sharing/api/v1/shares).

A grant is a share as it matters for search: a path in the user's own view and the reader it
adds to everything at or below that path. The user's own shares give `user:<id>` (user share)
and `group:<id>` (group share); link, mail and federated shares grant no account. A share the
user received from a group gives `group:<id>` at the folder where it is mounted (its members
all read it); one received personally adds only the user, who reads what they see anyway."""

from typing import Any

from app.nextcloud.client import NextcloudClient

SHARES = "apps/files_sharing/api/v1/shares"
SHARE_USER, SHARE_GROUP = 0, 1

Grant = dict[str, str]  # {"path": "Documents/x", "reader": "group:staff"}


def read_grants(client: NextcloudClient) -> list[Grant]:
    """The user's grants, sorted (two reads are equal when nothing changed): two requests."""
    owned = client.ocs(SHARES, {"format": "json", "reshares": "true"})
    received = client.ocs(SHARES, {"format": "json", "shared_with_me": "true"})
    grants = [g for share in _list(owned) if (g := _owned(share)) is not None]
    grants += [g for share in _list(received) if (g := _received(share)) is not None]
    unique = {(g["path"], g["reader"]): g for g in grants}
    return [unique[k] for k in sorted(unique)]


def _list(data: Any) -> list[dict[str, Any]]:
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []


def _owned(share: dict[str, Any]) -> Grant | None:
    who, kind = share.get("share_with"), share.get("share_type")
    if not who or kind not in (SHARE_USER, SHARE_GROUP):
        return None
    reader = f"user:{who}" if kind == SHARE_USER else f"group:{who}"
    path = str(share.get("path") or "").strip("/")
    return {"path": path, "reader": reader} if path else None


def _received(share: dict[str, Any]) -> Grant | None:
    if share.get("share_type") != SHARE_GROUP or not share.get("share_with"):
        return None
    target = str(share.get("file_target") or share.get("path") or "").strip("/")
    return {"path": target, "reader": f"group:{share['share_with']}"} if target else None


def readers_at(path: str, grants: list[Grant]) -> set[str]:
    """The readers the grants give a node at `path` (its own and its ancestors' shares)."""
    return {g["reader"] for g in grants if path == g["path"] or path.startswith(g["path"] + "/")}
