"""Verify-on-read against Nextcloud itself, for a service without SEARCH_VERIFY_URL: one
`SEARCH` (RFC 5323, an `oc:fileid` eq per hit) a round, as the searching user, over the files
and notes among the hits. A file the user no longer finds in Nextcloud is `forbidden` for them:
hidden at once; the walk deletes it from the index when no connected user sees it any more.
A user who is not connected, and the other doc types, get no opinion; a failure keeps every
result (fail-open) and marks the search degraded."""

import threading
from collections.abc import Sequence
from xml.sax.saxutils import escape

from app.nextcloud.client import NextcloudClient
from app.nextcloud.dav import files_root, parse_multistatus
from app.nextcloud.errors import NextcloudError
from app.nextcloud.ledger import Ledger
from app.nextcloud.vault import Vault
from app.search.verify import MAX_ROUNDS, DocRef, VerifyBudget, degrade

CHECKED_TYPES = ("file", "note")


def search_body(user_id: str, fileids: Sequence[str]) -> str:
    matches = "".join(
        f"<d:eq><d:prop><oc:fileid/></d:prop><d:literal>{escape(i)}</d:literal></d:eq>"
        for i in fileids
    )
    return (
        '<?xml version="1.0"?><d:searchrequest xmlns:d="DAV:" '
        'xmlns:oc="http://owncloud.org/ns"><d:basicsearch>'
        "<d:select><d:prop><oc:fileid/></d:prop></d:select>"
        f"<d:from><d:scope><d:href>/files/{escape(user_id)}</d:href>"
        "<d:depth>infinity</d:depth></d:scope></d:from>"
        f"<d:where><d:or>{matches}</d:or></d:where>"
        f"<d:orderby/><d:limit><d:nresults>{len(fileids)}</d:nresults></d:limit>"
        "</d:basicsearch></d:searchrequest>"
    )


class NextcloudVerifier:
    """One client per connected user, kept from search to search: a search reuses the user's
    open connection to Nextcloud instead of a TCP (and TLS) handshake of its own. A user's
    client is replaced when their app password changes, dropped when they are revoked or
    disconnected, and closed with the verifier."""

    def __init__(self, base_url: str, ledger: Ledger, vault: Vault, timeout: float) -> None:
        self.base_url, self.ledger, self.vault, self.timeout = base_url, ledger, vault, timeout
        self._clients: dict[str, tuple[tuple[str, str], NextcloudClient]] = {}
        self._lock = threading.Lock()

    def budget(self) -> VerifyBudget:
        return VerifyBudget(self.timeout, MAX_ROUNDS)

    def statuses(
        self, user: str, documents: Sequence[DocRef], budget: VerifyBudget
    ) -> dict[DocRef, str]:
        asked = [r for r in documents if r[0] in CHECKED_TYPES and r[1].isdigit()]
        if not asked or budget.degraded:
            return {}
        client = self._client(user)
        if client is None:
            return {}
        if budget.spent():
            return degrade(budget, "verify budget spent (deadline or rounds)")
        budget.rounds += 1
        fileids = sorted({doc_id for _, doc_id in asked})
        try:
            response = client.request(
                "SEARCH",
                "/remote.php/dav/",
                content=search_body(user, fileids),
                headers={"Content-Type": "text/xml"},
                timeout=budget.remaining(),
            )
            if response.status_code != 207:
                return degrade(budget, f"Nextcloud SEARCH answered {response.status_code}")
            found = {e.fileid for e in parse_multistatus(response.content, files_root(user))}
        except NextcloudError as exc:
            return degrade(budget, str(exc))
        return {ref: "forbidden" for ref in asked if ref[1] not in found}

    def _client(self, user: str) -> NextcloudClient | None:
        """The user's kept client; None for a user who is not connected (or revoked)."""
        record = self.ledger.user(user)
        if record is None or record.state == "revoked":
            self._drop(user)
            return None
        login = (record.login_name, record.sealed_password)
        with self._lock:  # one client a user, even when their first searches come at once
            replaced = self._clients.get(user)
            if replaced is not None and replaced[0] == login:
                return replaced[1]
            password = self.vault.open(record.sealed_password)
            if password is None:
                return None
            client = NextcloudClient(self.base_url, record.login_name, password, retries=0)
            self._clients[user] = (login, client)
        if replaced is not None:
            replaced[1].close()
        return client

    def _drop(self, user: str) -> None:
        with self._lock:
            kept = self._clients.pop(user, None)
        if kept is not None:
            kept[1].close()

    def close(self) -> None:
        with self._lock:
            kept, self._clients = list(self._clients.values()), {}
        for _, client in kept:
            client.close()
