import time
from pathlib import Path

from app.nextcloud.ledger import Ledger
from app.nextcloud.vault import Vault
from app.nextcloud.verify import NextcloudVerifier
from tests.nextcloud.server import NextcloudDialect

USER, LOGIN = "alice-uuid", "alice@example.org"


def test_a_kept_client_reconnects_once_nextcloud_closed_its_idle_connection(
    tmp_path: Path,
) -> None:
    nc = NextcloudDialect()
    nc.start(keep_alive=1)
    try:
        nc.add_user(USER, login=LOGIN)
        kept = str(nc.put(USER, "Docs/kept.txt", b"kept").fileid)
        gone = str(nc.put(USER, "Docs/gone.txt", b"gone").fileid)
        nc.delete(USER, "Docs/gone.txt")
        ledger, vault = Ledger(tmp_path / "ledger.db"), Vault("a-secret-key-of-enough-characters")
        ledger.save_user(USER, LOGIN, vault.seal(nc.app_password(USER)))
        verifier = NextcloudVerifier(nc.url, ledger, vault, 5.0)
        asked = [("file", kept), ("file", gone)]
        for pause in (0.0, 1.5):  # the second after the dialect has closed the connection
            time.sleep(pause)
            budget = verifier.budget()
            assert verifier.statuses(USER, asked, budget) == {("file", gone): "forbidden"}
            assert not budget.degraded
        assert len({r.peer for r in nc.log.snapshot()}) == 2
        verifier.close()
        ledger.close()
    finally:
        nc.stop()
