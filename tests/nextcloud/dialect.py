"""The Nextcloud dialect's public face: import the server and its vocabulary from here.

The parts live in their own modules (model, dav, davsearch, ocs, deck, caldav, webhooks,
faults, asgi, server), each citing the Nextcloud documentation it follows.
"""

from tests.nextcloud.caldav import vevent
from tests.nextcloud.faults import Fault, FaultKind, Record
from tests.nextcloud.model import (
    PERMISSION_ALL,
    PERMISSION_CREATE,
    PERMISSION_DELETE,
    PERMISSION_READ,
    PERMISSION_SHARE,
    PERMISSION_UPDATE,
    SHARE_GROUP,
    SHARE_LINK,
    SHARE_USER,
    Clock,
)
from tests.nextcloud.server import NextcloudDialect

__all__ = [
    "PERMISSION_ALL",
    "PERMISSION_CREATE",
    "PERMISSION_DELETE",
    "PERMISSION_READ",
    "PERMISSION_SHARE",
    "PERMISSION_UPDATE",
    "SHARE_GROUP",
    "SHARE_LINK",
    "SHARE_USER",
    "Clock",
    "Fault",
    "FaultKind",
    "NextcloudDialect",
    "Record",
    "vevent",
]
