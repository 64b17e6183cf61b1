"""Nextcloud's webhook_listeners envelope -> whom to wake and what to look at.

`{"event": {"class": ..., "node": {"id", "path"}, ...}, "user": {"uid"} | null, "time"}`. An
event is only a hint: the users it concerns (the actor, the owner named by the node's path
`/<owner>/files/...`, and whoever the ledger says holds the node) get a tick now, which reads
content and readers from Nextcloud itself; nothing in the payload is trusted."""

from dataclasses import dataclass
from typing import Any

FILE_EVENTS = frozenset(
    "OCP\\Files\\Events\\Node\\" + name
    for name in (
        "NodeCreatedEvent",
        "NodeWrittenEvent",
        "NodeDeletedEvent",
        "BeforeNodeDeletedEvent",
        "NodeRenamedEvent",
        "NodeCopiedEvent",
        "NodeTouchedEvent",
    )
)
TAG_EVENTS = frozenset({"OCP\\SystemTag\\TagAssignedEvent", "OCP\\SystemTag\\TagUnassignedEvent"})
DECK_EVENTS = frozenset(
    "OCA\\Deck\\Event\\" + name
    for name in ("CardCreatedEvent", "CardUpdatedEvent", "CardDeletedEvent")
)


@dataclass(frozen=True)
class Hint:
    users: frozenset[str]  # user ids the event names (actor, owner)
    fileids: tuple[str, ...]  # nodes to look at first
    apps: bool = False  # an app's item changed (Deck): read the apps now


def hint_of(envelope: Any) -> Hint | None:
    """The hint in an envelope; None for an event the connector does not handle."""
    if not isinstance(envelope, dict) or not isinstance(envelope.get("event"), dict):
        return None
    event: dict[str, Any] = envelope["event"]
    kind = event.get("class")
    if kind not in FILE_EVENTS | TAG_EVENTS | DECK_EVENTS:
        return None
    users = set()
    user = envelope.get("user")
    if isinstance(user, dict) and isinstance(user.get("uid"), str):
        users.add(user["uid"])
    fileids: list[str] = []
    for name in ("node", "source", "target"):
        node = event.get(name)
        if isinstance(node, dict):
            if isinstance(node.get("id"), int | str):
                fileids.append(str(node["id"]))
            owner = _owner_of(node.get("path"))
            if owner:
                users.add(owner)
    if kind in TAG_EVENTS and isinstance(event.get("objectIds"), list):
        fileids += [str(i) for i in event["objectIds"] if isinstance(i, int | str)]
    if kind in DECK_EVENTS:
        return Hint(frozenset(users), (), apps=True)
    return Hint(frozenset(users), tuple(dict.fromkeys(fileids)))


def _owner_of(path: Any) -> str | None:
    """`/alice/files/Documents/a.txt` -> `alice`."""
    if not isinstance(path, str):
        return None
    parts = path.strip("/").split("/")
    return parts[0] if len(parts) >= 2 and parts[1] == "files" and parts[0] else None
