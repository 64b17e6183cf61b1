"""Deck: boards with an ACL of users and groups, labels, stacks, cards; its REST API reads.

Follows Deck's REST API documentation, docs/API.md in nextcloud/deck
(https://deck.readthedocs.io/en/latest/API/): the legacy base /index.php/apps/deck/api/v1.0/
(plain JSON) and the OCS base /ocs/v2.php/apps/deck/api/v1.0/ (the OCS envelope, header
OCS-APIRequest: true); GET /boards (details, If-Modified-Since: only boards changed after it),
/boards/{id}, /boards/{id}/stacks (If-Modified-Since), /boards/{id}/stacks/archived,
/boards/{id}/stacks/{id}, /boards/{id}/stacks/{id}/cards/{id}, /boards/{id}/labels/{id}; the
ETag header (and the "ETag" field) of boards, stacks and cards, a change to a child changing
its parents' ETags, If-None-Match answering 304; 403 {"status": 403, "message": "Permission
denied"}; the board, stack, card, label and acl fields of the examples. Card webhook events
follow docs/events.md. A deleted board or card keeps deletedAt (Deck deletes softly, so
undo_delete can restore it); deleted boards stay in the board list with deletedAt set, and
deleted or archived cards leave the stack listing (archived ones are under stacks/archived).
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from tests.nextcloud.model import World
from tests.nextcloud.web import Request, Response, json_response

CARD_EVENT = "OCA\\Deck\\Event\\Card{}Event"


@dataclass(eq=False)
class Entity:
    id: int
    last_modified: int
    version: int = 0

    @property
    def etag(self) -> str:
        return hashlib.md5(f"{self.id}:{self.last_modified}:{self.version}".encode()).hexdigest()

    def touch(self, now: int) -> None:
        self.last_modified, self.version = now, self.version + 1


@dataclass(eq=False)
class Label(Entity):
    title: str = ""
    color: str = "31CC7C"
    board_id: int = 0


@dataclass(eq=False)
class Acl(Entity):
    participant: str = ""
    type: int = 0
    edit: bool = False
    share: bool = False
    manage: bool = False


@dataclass(eq=False)
class Card(Entity):
    title: str = ""
    description: str = ""
    stack_id: int = 0
    owner: str = ""
    order: int = 999
    duedate: str | None = None
    archived: bool = False
    done: str | None = None
    deleted_at: int = 0
    created_at: int = 0
    labels: list[int] = field(default_factory=list)
    assigned: list[str] = field(default_factory=list)


@dataclass(eq=False)
class Stack(Entity):
    title: str = ""
    board_id: int = 0
    order: int = 999
    deleted_at: int = 0
    cards: list[int] = field(default_factory=list)


@dataclass(eq=False)
class Board(Entity):
    title: str = ""
    owner: str = ""
    color: str = "0082c9"
    archived: bool = False
    deleted_at: int = 0
    labels: list[Label] = field(default_factory=list)
    acl: list[Acl] = field(default_factory=list)
    stacks: list[int] = field(default_factory=list)


def _iso(ts: int | None) -> str | None:
    return None if not ts else datetime.fromtimestamp(ts, UTC).isoformat()


class Deck:
    """The Deck app's data; the control API the tests use to change it."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.installed = True
        self.boards: dict[int, Board] = {}
        self.stacks: dict[int, Stack] = {}
        self.cards: dict[int, Card] = {}
        self._ids = itertools.count(1)

    def _now(self) -> int:
        return self.world.clock.now()

    # control API ---------------------------------------------------------------------------

    def add_board(self, owner: str, title: str, color: str = "0082c9") -> Board:
        with self.world.lock:
            board = Board(next(self._ids), self._now(), title=title, owner=owner, color=color)
            self.boards[board.id] = board
            return board

    def share_board(
        self,
        board_id: int,
        participant: str,
        type: int = 0,
        edit: bool = False,
        share: bool = False,
        manage: bool = False,
    ) -> Acl:
        with self.world.lock:
            board = self.boards[board_id]
            acl = Acl(
                next(self._ids),
                self._now(),
                participant=participant,
                type=type,
                edit=edit,
                share=share,
                manage=manage,
            )
            board.acl.append(acl)
            board.touch(self._now())
            return acl

    def unshare_board(self, board_id: int, acl_id: int) -> None:
        with self.world.lock:
            board = self.boards[board_id]
            board.acl = [a for a in board.acl if a.id != acl_id]
            board.touch(self._now())

    def add_label(self, board_id: int, title: str, color: str = "31CC7C") -> Label:
        with self.world.lock:
            board = self.boards[board_id]
            label = Label(next(self._ids), self._now(), title=title, color=color, board_id=board_id)
            board.labels.append(label)
            board.touch(self._now())
            return label

    def add_stack(self, board_id: int, title: str, order: int = 999) -> Stack:
        with self.world.lock:
            stack = Stack(next(self._ids), self._now(), title=title, board_id=board_id, order=order)
            self.stacks[stack.id] = stack
            self.boards[board_id].stacks.append(stack.id)
            self.boards[board_id].touch(self._now())
            return stack

    def add_card(
        self,
        stack_id: int,
        title: str,
        description: str = "",
        owner: str | None = None,
        duedate: str | None = None,
        labels: tuple[int, ...] = (),
        actor: str | None = None,
    ) -> Card:
        with self.world.lock:
            stack = self.stacks[stack_id]
            board = self.boards[stack.board_id]
            now = self._now()
            card = Card(
                next(self._ids),
                now,
                title=title,
                description=description,
                stack_id=stack_id,
                owner=owner or board.owner,
                duedate=duedate,
                created_at=now,
                labels=list(labels),
            )
            self.cards[card.id] = card
            stack.cards.append(card.id)
            self._changed(card)
            self._event("Created", actor or card.owner, self._event_card(card))
            return card

    def update_card(self, card_id: int, actor: str | None = None, **changes: Any) -> Card:
        """Change card fields (title, description, duedate, archived, done, stack_id, ...)."""
        with self.world.lock:
            card = self.cards[card_id]
            before = self._event_card(card)
            if "stack_id" in changes and changes["stack_id"] != card.stack_id:
                old = self.stacks[card.stack_id]
                old.cards.remove(card.id)
                old.touch(self._now())
                self.stacks[changes["stack_id"]].cards.append(card.id)
            for key, value in changes.items():
                if not hasattr(card, key):
                    raise AttributeError(key)
                setattr(card, key, value)
            self._changed(card)
            self._event(
                "Updated", actor or card.owner, {"before": before, "after": self._event_card(card)}
            )
            return card

    def assign_label(self, card_id: int, label_id: int) -> None:
        with self.world.lock:
            card = self.cards[card_id]
            card.labels.append(label_id)
            self._changed(card)

    def delete_card(self, card_id: int, actor: str | None = None) -> None:
        with self.world.lock:
            card = self.cards[card_id]
            card.deleted_at = self._now()
            self._changed(card)
            self._event("Deleted", actor or card.owner, self._event_card(card))

    def delete_board(self, board_id: int) -> None:
        with self.world.lock:
            board = self.boards[board_id]
            board.deleted_at = self._now()
            board.touch(self._now())

    def _changed(self, card: Card) -> None:
        now = self._now()
        stack = self.stacks[card.stack_id]
        for entity in (card, stack, self.boards[stack.board_id]):
            entity.touch(now)

    def _event(self, kind: str, actor: str | None, fields: dict[str, Any]) -> None:
        self.world.emit(CARD_EVENT.format(kind), actor, **fields)

    def _event_card(self, card: Card) -> dict[str, Any]:
        stack = self.stacks[card.stack_id]
        board = self.boards[stack.board_id]
        labels = [{"id": lb.id, "title": lb.title} for lb in board.labels if lb.id in card.labels]
        return {
            "id": card.id,
            "title": card.title,
            "description": card.description,
            "boardId": board.id,
            "stackId": stack.id,
            "lastModified": _iso(card.last_modified),
            "createdAt": _iso(card.created_at),
            "labels": labels,
            "assignedUsers": list(card.assigned),
            "order": card.order,
            "archived": card.archived,
            "commentsUnread": 0,
            "commentsCount": 0,
            "owner": card.owner,
            "lastEditor": None,
            "duedate": card.duedate,
            "doneAt": card.done,
            "deletedAt": _iso(card.deleted_at),
        }

    # JSON ----------------------------------------------------------------------------------

    def _user(self, uid: str) -> dict[str, str]:
        user = self.world.users.get(uid)
        return {"primaryKey": uid, "uid": uid, "displayname": user.display_name if user else uid}

    def permissions(self, board: Board, uid: str) -> dict[str, bool] | None:
        """The user's permissions on a board, None when they cannot see it."""
        if board.owner == uid:
            return dict.fromkeys(
                ("PERMISSION_READ", "PERMISSION_EDIT", "PERMISSION_MANAGE", "PERMISSION_SHARE"),
                True,
            )
        user = self.world.users.get(uid)
        groups = user.groups if user else set()
        rules = [
            a
            for a in board.acl
            if (a.type == 0 and a.participant == uid) or (a.type == 1 and a.participant in groups)
        ]
        if not rules:
            return None
        return {
            "PERMISSION_READ": True,
            "PERMISSION_EDIT": any(a.edit for a in rules),
            "PERMISSION_MANAGE": any(a.manage for a in rules),
            "PERMISSION_SHARE": any(a.share for a in rules),
        }

    def label_json(self, label: Label) -> dict[str, Any]:
        return {
            "title": label.title,
            "color": label.color,
            "boardId": label.board_id,
            "cardId": None,
            "id": label.id,
            "ETag": label.etag,
        }

    def card_json(self, card: Card) -> dict[str, Any]:
        board = self.boards[self.stacks[card.stack_id].board_id]
        labels = [self.label_json(lb) for lb in board.labels if lb.id in card.labels]
        return {
            "title": card.title,
            "description": card.description,
            "stackId": card.stack_id,
            "type": "plain",
            "lastModified": card.last_modified,
            "createdAt": card.created_at,
            "labels": labels,
            "assignedUsers": [
                {"id": i, "participant": self._user(u), "cardId": card.id}
                for i, u in enumerate(card.assigned, 1)
            ],
            "attachments": None,
            "attachmentCount": 0,
            "owner": card.owner,
            "order": card.order,
            "archived": card.archived,
            "done": card.done,
            "duedate": card.duedate,
            "deletedAt": card.deleted_at,
            "commentsUnread": 0,
            "id": card.id,
            "overdue": 0,
            "ETag": card.etag,
        }

    def stack_json(self, stack: Stack, archived: bool = False) -> dict[str, Any]:
        cards = [self.cards[c] for c in stack.cards]
        live = [c for c in cards if not c.deleted_at and c.archived == archived]
        return {
            "title": stack.title,
            "boardId": stack.board_id,
            "deletedAt": stack.deleted_at,
            "lastModified": stack.last_modified,
            "cards": [self.card_json(c) for c in sorted(live, key=lambda c: c.order)],
            "order": stack.order,
            "id": stack.id,
            "ETag": stack.etag,
        }

    def board_json(self, board: Board, uid: str, details: bool) -> dict[str, Any]:
        perms = self.permissions(board, uid) or {}
        acl = [
            {
                "participant": self._user(a.participant)
                if a.type == 0
                else {
                    "primaryKey": a.participant,
                    "uid": a.participant,
                    "displayname": a.participant,
                },
                "type": a.type,
                "boardId": board.id,
                "permissionEdit": a.edit,
                "permissionShare": a.share,
                "permissionManage": a.manage,
                "owner": False,
                "id": a.id,
            }
            for a in board.acl
        ]
        out: dict[str, Any] = {
            "title": board.title,
            "owner": self._user(board.owner),
            "color": board.color,
            "archived": board.archived,
            "labels": [self.label_json(lb) for lb in board.labels],
            "acl": acl,
            "permissions": perms,
            "users": [],
            "shared": int(board.owner != uid),
            "deletedAt": board.deleted_at,
            "id": board.id,
            "lastModified": board.last_modified,
            "settings": {},
            "ETag": board.etag,
        }
        if details:
            out["stacks"] = [self.stack_json(self.stacks[s]) for s in board.stacks]
        return out

    # HTTP ---------------------------------------------------------------------------------

    def handle(self, req: Request, rest: str) -> Response:
        """GET <base>/boards...: the documented reads; writes go through the control API."""
        assert req.user is not None
        uid = req.user.uid
        parts = [p for p in rest.split("/") if p]
        if req.method != "GET" or not parts or parts[0] != "boards":
            return json_response(405, {"status": 405, "message": "Not supported by the dialect"})
        since: int | None = None
        if req.headers.get("if-modified-since"):
            try:
                since = int(parsedate_to_datetime(req.headers["if-modified-since"]).timestamp())
            except (TypeError, ValueError):
                return _error(400, "Invalid If-Modified-Since header provided.")
        with self.world.lock:
            if len(parts) == 1:
                boards = [
                    b
                    for b in self.boards.values()
                    if self.permissions(b, uid) and (since is None or b.last_modified > since)
                ]
                details = req.query.get("details") in ("true", "1")
                return json_response(200, [self.board_json(b, uid, details) for b in boards])
            board = self.boards.get(int(parts[1])) if parts[1].isdigit() else None
            if board is None:
                return _error(404, "Board not found")
            if self.permissions(board, uid) is None:
                return _error(403, "Permission denied")
            entity, data = self._lookup(board, parts[2:], uid, since)
            if entity is None:
                return _error(404, "Not found")
            etag = f'"{entity.etag}"'
            if req.headers.get("if-none-match") in (etag, entity.etag):
                return Response(304, headers=[("ETag", etag)])
            return json_response(200, data, [("ETag", etag)])

    def _lookup(
        self, board: Board, parts: list[str], uid: str, since: int | None
    ) -> tuple[Entity | None, Any]:
        if not parts:
            return board, self.board_json(board, uid, False)
        if parts[0] == "labels" and len(parts) == 2:
            label = next((lb for lb in board.labels if str(lb.id) == parts[1]), None)
            return label, None if label is None else self.label_json(label)
        if parts[0] != "stacks":
            return None, None
        stacks = [self.stacks[s] for s in board.stacks if not self.stacks[s].deleted_at]
        if len(parts) == 1 or parts[1] == "archived":
            chosen = [s for s in stacks if since is None or s.last_modified > since]
            data = [self.stack_json(s, archived=len(parts) > 1) for s in chosen]
            return board, sorted(data, key=lambda s: s["order"])
        stack = next((s for s in stacks if str(s.id) == parts[1]), None)
        if stack is None or len(parts) == 3:
            return None, None
        if len(parts) == 2:
            return stack, self.stack_json(stack)
        card = self.cards.get(int(parts[3])) if len(parts) == 4 and parts[3].isdigit() else None
        if card is None or card.stack_id != stack.id or card.deleted_at:
            return None, None
        return card, self.card_json(card)


def _error(status: int, message: str) -> Response:
    return json_response(status, {"status": status, "message": message})
