"""OCS: the envelope, the current user, the Share API, app passwords, Login Flow v2.

- The envelope ({"ocs": {"meta": {status, statuscode, message, totalitems, itemsperpage},
  "data": ...}}, XML unless format=json or Accept: application/json; v1 answers statuscode 100
  with HTTP 200, v2 the HTTP status) and GET cloud/user follow
  https://docs.nextcloud.com/server/latest/developer_manual/client_apis/OCS/ocs-api-overview.html
- Every OCS request needs the header OCS-APIRequest: true; without it Nextcloud's
  SecurityMiddleware answers 412 {"message":"CSRF check failed"} (nextcloud/server issue #2753).
- Shares follow https://docs.nextcloud.com/server/latest/developer_manual/client_apis/OCS/ocs-share-api.html
  (GET /shares with path, reshares, subfiles, shared_with_me; GET/POST/PUT/DELETE; status
  codes) with the share fields of apps/files_sharing/lib/ResponseDefinitions.php
  (Files_SharingShare); GET /shares/<id> answers a list of one share.
- App passwords and Login Flow v2 follow
  https://docs.nextcloud.com/server/latest/developer_manual/client_apis/LoginFlow/index.html
  (POST /index.php/login/v2 -> {"poll": {"token", "endpoint"}, "login"}; the poll answers 404
  until the user grants access, then {"server", "loginName", "appPassword"} once; DELETE
  /ocs/v2.php/core/apppassword destroys the app password in use).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from tests.nextcloud.model import (
    PERMISSION_ALL,
    SHARE_GROUP,
    SHARE_LINK,
    SHARE_USER,
    Located,
    Share,
    World,
)
from tests.nextcloud.web import Request, Response, json_response


def wants_json(req: Request) -> bool:
    return req.query.get("format") == "json" or "application/json" in req.headers.get("accept", "")


def ocs(req: Request, data: Any, status: int = 200, message: str = "OK") -> Response:
    """The OCS envelope, v1 or v2 by the request's path, JSON or XML by what it asks for."""
    v1 = req.path.startswith("/ocs/v1.php")
    ok = status < 300
    meta = {
        "status": "ok" if ok else "failure",
        "statuscode": (100 if ok else status) if v1 else status,
        "message": message,
        "totalitems": "",
        "itemsperpage": "",
    }
    http = 200 if v1 and status != 401 else status
    if wants_json(req):
        return json_response(http, {"ocs": {"meta": meta, "data": data}})
    body = f'<?xml version="1.0"?>\n<ocs>{_xml("meta", meta)}{_xml("data", data)}</ocs>\n'
    return Response(http, body.encode(), [("Content-Type", "application/xml; charset=utf-8")])


def _xml(name: str, value: Any) -> str:
    if isinstance(value, dict):
        inner = "".join(_xml(str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        inner = "".join(_xml("element", v) for v in value)
    elif isinstance(value, bool):
        inner = "1" if value else ""
    else:
        inner = "" if value is None else escape(str(value))
    return f"<{name}>{inner}</{name}>" if inner else f"<{name}/>"


def csrf_failed() -> Response:
    return json_response(412, {"message": "CSRF check failed"})


def not_logged_in(req: Request) -> Response:
    resp = ocs(req, [], 401, "Current user is not logged in")
    resp.headers.append(("WWW-Authenticate", 'Basic realm="Nextcloud", charset="UTF-8"'))
    return resp


def current_user(world: World, req: Request) -> Response:
    assert req.user is not None
    user = req.user
    return ocs(
        req,
        {
            "enabled": True,
            "id": user.uid,
            "backend": "Database",
            "email": user.email,
            "displayname": user.display_name,
            "display-name": user.display_name,
            "groups": sorted(user.groups),
            "language": "en",
            "locale": "en_US",
            "quota": {
                "free": -3,
                "used": world.roots[user.uid].size,
                "total": -3,
                "relative": 0,
                "quota": -3,
            },
        },
    )


def capabilities(req: Request, apps: dict[str, bool]) -> Response:
    caps: dict[str, Any] = {
        "core": {"pollinterval": 60, "webdav-root": "remote.php/webdav"},
        "files_sharing": {"api_enabled": True, "public": {"enabled": True}},
        "dav": {"chunking": "1.0"},
    }
    if apps.get("deck"):
        caps["deck"] = {"version": "1.14.0", "canCreateBoards": True, "apiVersions": ["1.0", "1.1"]}
    return ocs(
        req,
        {
            "version": {
                "major": 31,
                "minor": 0,
                "micro": 0,
                "string": "31.0.0",
                "edition": "",
                "extendedSupport": False,
            },
            "capabilities": caps,
        },
    )


# shares ------------------------------------------------------------------------------------


def format_share(world: World, share: Share, viewer: str, base_url: str) -> dict[str, Any]:
    node, owner = share.node, world.users[share.owner]
    if viewer == share.owner or share.share_type == SHARE_LINK:
        path = "/" + node.path
        target = "/" + (share.targets.get(share.share_with or "") or node.name)
    else:
        target = path = "/" + world._target(share, viewer)
    out: dict[str, Any] = {
        "id": str(share.id),
        "share_type": share.share_type,
        "uid_owner": owner.uid,
        "displayname_owner": owner.display_name,
        "permissions": share.permissions,
        "can_edit": viewer == share.owner,
        "can_delete": viewer == share.owner,
        "stime": share.stime,
        "parent": None,
        "expiration": None,
        "token": share.token,
        "uid_file_owner": owner.uid,
        "displayname_file_owner": owner.display_name,
        "note": share.note,
        "label": None,
        "path": path,
        "item_type": "folder" if node.is_dir else "file",
        "item_permissions": world.permissions(_located(world, share, viewer)),
        "mimetype": node.content_type,
        "has_preview": False,
        "storage_id": f"home::{owner.uid}",
        "storage": 1,
        "item_source": node.fileid,
        "file_source": node.fileid,
        "file_parent": node.parent.fileid if node.parent else -1,
        "file_target": target,
        "item_size": node.size,
        "item_mtime": node.mtime,
        "mail_send": 0,
        "hide_download": 0,
        "attributes": None,
    }
    if share.share_type == SHARE_USER and share.share_with:
        sharee = world.users.get(share.share_with)
        out["share_with"] = share.share_with
        out["share_with_displayname"] = sharee.display_name if sharee else share.share_with
    elif share.share_type == SHARE_GROUP:
        out["share_with"] = out["share_with_displayname"] = share.share_with
    elif share.token:
        out["share_with"] = None
        out["url"] = f"{base_url}/s/{share.token}"
    return out


def _located(world: World, share: Share, viewer: str) -> Located:
    return Located(share.node, "", None if viewer == share.owner else share)


def received(world: World, uid: str) -> list[Share]:
    return list(world.mounts(uid).values())


def shares(world: World, req: Request, rest: str) -> Response:
    """/ocs/v2.php/apps/files_sharing/api/v1/shares[/<id>]."""
    assert req.user is not None
    uid, base = req.user.uid, req.base_url
    with world.lock:
        if rest:
            share = world.shares.get(int(rest)) if rest.isdigit() else None
            if share is None or (share.owner != uid and share not in received(world, uid)):
                return ocs(req, [], 404, "Wrong share ID, share does not exist")
            if req.method == "DELETE":
                if share.owner != uid:
                    return ocs(req, [], 403, "Could not delete share")
                world.unshare(share.id)
                return ocs(req, [])
            if req.method == "PUT":
                params = req.form()
                if "permissions" not in params:
                    return ocs(req, [], 400, "Wrong or no update parameter given")
                world.set_share_permissions(share.id, int(params["permissions"]))
            return ocs(req, [format_share(world, share, uid, base)])
        if req.method == "POST":
            return _create(world, req)
        params = req.query
        if params.get("shared_with_me") == "true":
            found = received(world, uid)
            if "path" in params:
                loc = world.locate(uid, params["path"])
                found = [s for s in found if loc is not None and s.node is loc.node]
            return ocs(req, [format_share(world, s, uid, base) for s in found])
        found = [s for s in world.shares.values() if s.owner == uid]
        if "path" in params:
            loc = world.locate(uid, params["path"])
            if loc is None:
                return ocs(req, [], 404, "Wrong path, file/folder does not exist")
            if params.get("subfiles") == "true":
                if not loc.node.is_dir:
                    return ocs(req, [], 400, "Not a directory")
                kids = {c.node.fileid for c in world.children(uid, loc)}
                found = [s for s in found if s.node.fileid in kids]
            else:
                found = list(world.shares_on.get(loc.node.fileid, []))
                if params.get("reshares") != "true":
                    found = [s for s in found if s.owner == uid]
        found.sort(key=lambda s: s.id)
        return ocs(req, [format_share(world, s, uid, base) for s in found])


def _create(world: World, req: Request) -> Response:
    assert req.user is not None
    params = req.form()
    try:
        share_type = int(params.get("shareType", -1))
    except ValueError:
        share_type = -1
    if share_type not in (SHARE_USER, SHARE_GROUP, SHARE_LINK):
        return ocs(req, [], 400, "Unknown share type")
    path, who = str(params.get("path", "")), params.get("shareWith")
    loc = world.locate(req.user.uid, path)
    if loc is None or loc.share is not None:
        return ocs(req, [], 404, "Wrong path, file/folder does not exist")
    if share_type == SHARE_USER and who not in world.users:
        return ocs(req, [], 404, "Please specify a valid user")
    if share_type == SHARE_GROUP and who not in world.groups:
        return ocs(req, [], 404, "Please specify a valid group")
    perms = int(params["permissions"]) if "permissions" in params else None
    share = world.share(
        req.user.uid,
        loc.view_path,
        share_type,
        str(who) if who is not None else None,
        perms if perms is not None else (None if share_type == SHARE_LINK else PERMISSION_ALL),
        note=str(params.get("note", "")),
    )
    return ocs(req, format_share(world, share, req.user.uid, req.base_url))


# app passwords, Login Flow v2 -------------------------------------------------------------


def delete_app_password(world: World, req: Request, password: str) -> Response:
    if password not in world.app_passwords:
        return ocs(req, [], 403, "Password confirmation is required")
    world.revoke(password)
    return ocs(req, [])


@dataclass
class Flow:
    poll_token: str
    login_token: str
    granted_to: str | None = None
    app_password: str | None = None
    collected: bool = False


class LoginFlows:
    """Login Flow v2 sessions: started anonymously, granted by the test, collected once."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.flows: dict[str, Flow] = {}

    def start(self, req: Request) -> Response:
        flow = Flow(secrets.token_urlsafe(96)[:128], secrets.token_urlsafe(96)[:128])
        self.flows[flow.poll_token] = flow
        return json_response(
            200,
            {
                "poll": {
                    "token": flow.poll_token,
                    "endpoint": f"{req.base_url}/index.php/login/v2/poll",
                },
                "login": f"{req.base_url}/index.php/login/v2/flow/{flow.login_token}",
            },
        )

    def grant(self, login_url: str, uid: str) -> str:
        """The user opened `login_url` and granted access: a new app password for them."""
        token = login_url.rstrip("/").rsplit("/", 1)[-1]
        flow = next(f for f in self.flows.values() if f.login_token == token)
        flow.granted_to = uid
        flow.app_password = self.world.issue_app_password(uid)
        return flow.app_password

    def poll(self, req: Request) -> Response:
        token = str(req.form().get("token", ""))
        flow = self.flows.get(token)
        if flow is None or flow.granted_to is None or flow.collected:
            return json_response(404, [])
        flow.collected = True
        user = self.world.users[flow.granted_to]
        return json_response(
            200, {"server": req.base_url, "loginName": user.login, "appPassword": flow.app_password}
        )

    def page(self, req: Request) -> Response:
        html = "<!DOCTYPE html><title>Connect to your account</title><p>Log in to grant.</p>"
        return Response(200, html.encode(), [("Content-Type", "text/html; charset=utf-8")])
