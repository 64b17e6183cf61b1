"""The connector: connected users, each synced on a thread of their own, and what the routes,
the webhooks and status ask of it."""

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from app.config import Settings
from app.errors import NextcloudAuthFailed, NextcloudUnreachable, NotFound
from app.ingest.service import IngestService
from app.nextcloud.client import NextcloudClient, RequestCounter
from app.nextcloud.errors import NextcloudError, Revoked, Unreachable
from app.nextcloud.files import FileReader
from app.nextcloud.ledger import Ledger
from app.nextcloud.reconcile import IndexWriter, Labeler
from app.nextcloud.sync import Schedule, UserSync
from app.nextcloud.vault import Vault
from app.nextcloud.verify import NextcloudVerifier
from app.nextcloud.webhooks import Hint

log = logging.getLogger("astrolabe.nextcloud")
WATCH_SECONDS = 5.0


@dataclass(frozen=True)
class UserFigures:
    user_id: str
    state: str
    last_error: str | None
    files_seen: int
    indexed: int
    pending: int
    skipped: dict[str, int]
    last_tick: float | None
    lag_seconds: float


class _Runner:
    """One user's thread: a tick, then sleep until the interval passes or someone wakes it."""

    def __init__(self, sync: UserSync, interval: float) -> None:
        self.sync, self.interval = sync, interval
        self.wake, self.stop = threading.Event(), threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"nextcloud-{sync.user_id}", daemon=True
        )

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                self.sync.tick()
            except Exception:  # a bug must not end the user's sync for good
                log.exception("nextcloud user %s: tick crashed", self.sync.user_id)
            self.wake.wait(self.interval)
            self.wake.clear()


class Connector:
    def __init__(
        self,
        base_url: str,
        ledger: Ledger,
        vault: Vault,
        writer: IndexWriter,
        reader: FileReader,
        schedule: Schedule,
        concurrency: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.ledger, self.vault, self.writer, self.reader = ledger, vault, writer, reader
        self.schedule, self.clock = schedule, clock
        self.counter = RequestCounter()
        self.downloads = ThreadPoolExecutor(concurrency, thread_name_prefix="nextcloud-download")
        self._runners: dict[str, _Runner] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    def start(self) -> None:
        self._adopt_users()
        threading.Thread(target=self._watch, name="nextcloud-watch", daemon=True).start()

    def _watch(self) -> None:
        """Users connected by another process (`astrolabe-search nextcloud login`) are picked
        up from the ledger within WATCH_SECONDS."""
        while not self._stopped.wait(WATCH_SECONDS):
            try:
                self._adopt_users()
            except Exception:
                log.exception("nextcloud: reading the connected users failed")

    def _adopt_users(self) -> None:
        with self._lock:
            running = set(self._runners)
        for user in self.ledger.users():
            if user.user_id not in running:
                self._run(user.user_id)

    def stop(self) -> None:
        self._stopped.set()
        with self._lock:
            runners = list(self._runners.values())
            self._runners.clear()
        for runner in runners:
            runner.stop.set()
            runner.wake.set()
        self.writer.stop.set()
        for runner in runners:
            runner.thread.join(10)
        self.downloads.shutdown(wait=False, cancel_futures=True)
        self.ledger.close()

    def _run(self, user_id: str) -> None:
        """Start the user's sync, or wake the one running: one a user, whoever asks. A
        `connect` and the watch adopting the ledger's users may ask at once, and the second
        used to replace the first runner while its tick went on: two ticks of one user side
        by side."""
        with self._lock:
            runner = self._runners.get(user_id)
            if runner is None:
                runner = self._runners[user_id] = _Runner(
                    self._sync(user_id), self.schedule.interval
                )
                runner.thread.start()
                return
        runner.wake.set()

    def _sync(self, user_id: str) -> UserSync:
        return UserSync(
            user_id,
            self.ledger,
            self.vault,
            self.base_url,
            self.writer,
            self.reader,
            self.downloads,
            self.schedule,
            self.counter,
            self.clock,
        )

    # users --------------------------------------------------------------------------------

    def connect(self, login_name: str, app_password: str) -> str:
        """Check the credentials against Nextcloud, store them sealed, start syncing: the
        user id (which differs from the login name under LDAP)."""
        user_id = register(
            self.base_url, self.ledger, self.vault, login_name, app_password, self.counter
        )
        self._run(user_id)
        return user_id

    def disconnect(self, user_id: str) -> None:
        """Stop the user's sync; they stop being a reader of what only their sync saw, and
        what no connected user sees any more leaves the index."""
        if self.ledger.user(user_id) is None:
            raise NotFound(f"no connected Nextcloud user {user_id}")
        with self._lock:
            runner = self._runners.pop(user_id, None)
        if runner is not None:
            runner.stop.set()
            runner.wake.set()
            runner.thread.join(30)
        labeler = Labeler(self.ledger, self.writer, self.ledger.grants, self.base_url)
        files = list(self.ledger.files(user_id))
        self.ledger.forget_user(user_id)
        for node in files:
            labeler.relabel(node.key)
        for written in self.ledger.written_from_prefix("app:"):
            if written.source.endswith(f":{user_id}"):
                self.writer.delete(written.doc_key)
                self.ledger.drop_written(written.doc_key)

    def sync_now(self, user_id: str | None = None, full: bool = True) -> list[str]:
        """Wake the user's sync (every user's without one) for a tick now; a full one reads
        the share lists and the apps too, whether they are due or not."""
        with self._lock:
            runners = (
                dict(self._runners)
                if user_id is None
                else {k: v for k, v in self._runners.items() if k == user_id}
            )
        if user_id is not None and not runners:
            raise NotFound(f"no connected Nextcloud user {user_id}")
        for runner in runners.values():
            runner.sync.hint(None, force=full)
            runner.wake.set()
        return sorted(runners)

    def look_at(self, hint: Hint) -> int:
        """A webhook's hint: wake the syncs of the users it concerns (the users it names and
        whoever holds its nodes), each looking at its nodes first; how many were woken."""
        users = set(hint.users)
        for fileid in hint.fileids:
            users |= {node.user_id for node in self.ledger.holders(fileid)}
        with self._lock:
            runners = [r for uid, r in self._runners.items() if uid in users]
        for runner in runners:
            for fileid in hint.fileids:
                runner.sync.hint(fileid)
            runner.sync.hint(None, force=hint.apps)
            runner.wake.set()
        return len(runners)

    # status -------------------------------------------------------------------------------

    def figures(self) -> list[UserFigures]:
        with self._lock:
            runners = dict(self._runners)
        return user_figures(
            self.ledger,
            self.clock(),
            lambda uid: runners[uid].sync.pending if uid in runners else 0,
        )

    def verifier(self, timeout: float) -> NextcloudVerifier:
        return NextcloudVerifier(self.base_url, self.ledger, self.vault, timeout)

    def ticks(self) -> int:
        return self.counter.ticks


def register(
    base_url: str,
    ledger: Ledger,
    vault: Vault,
    login_name: str,
    app_password: str,
    counter: RequestCounter | None = None,
) -> str:
    """Check a login name and app password against Nextcloud and store them sealed (a
    running connector picks a new user up within seconds): the user id."""
    sealed = vault.seal(app_password)
    client = NextcloudClient(base_url, login_name, app_password, counter)
    try:
        user_id = client.user_id()
    except Revoked as exc:
        raise NextcloudAuthFailed("Nextcloud refused the login name or app password") from exc
    except Unreachable as exc:
        raise NextcloudUnreachable(f"Nextcloud did not answer: {exc}") from exc
    except NextcloudError as exc:
        raise NextcloudUnreachable(f"Nextcloud answered unexpectedly: {exc}") from exc
    finally:
        client.close()
    ledger.save_user(user_id, login_name, sealed)
    return user_id


def user_figures(
    ledger: Ledger, now: float, pending_of: Callable[[str], int] = lambda uid: 0
) -> list[UserFigures]:
    """Each connected user's state and figures, from the ledger."""
    out = []
    for user in ledger.users():
        seen, indexed, skipped = ledger.figures(user.user_id)
        out.append(
            UserFigures(
                user_id=user.user_id,
                state=user.state,
                last_error=user.last_error,
                files_seen=seen,
                indexed=indexed,
                pending=pending_of(user.user_id),
                skipped=skipped,
                last_tick=user.last_tick,
                lag_seconds=max(0.0, now - user.changed_since) if user.changed_since else 0.0,
            )
        )
    return out


def scratch_dir(data_dir: Path) -> Path:
    return data_dir / "nextcloud" / "downloads"


def ledger_path(data_dir: Path) -> Path:
    return data_dir / "nextcloud" / "ledger.sqlite3"


def open_connector(url: str, settings: Settings, ingest: IngestService) -> Connector:
    """The connector `serve` runs for SEARCH_NEXTCLOUD_URL (`url`), started."""
    connector = Connector(
        url,
        Ledger(ledger_path(settings.data_dir)),
        Vault(settings.secret_key),
        IndexWriter(ingest, threading.Event()),
        FileReader(ingest.extractor, scratch_dir(settings.data_dir), settings.max_file_bytes),
        Schedule(
            interval=settings.nextcloud_interval,
            shares_every=settings.nextcloud_shares_interval,
            apps_every=settings.nextcloud_shares_interval,
        ),
        settings.nextcloud_concurrency,
    )
    connector.start()
    return connector
