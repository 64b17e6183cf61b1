"""A backup directory sent over HTTP as a tar stream, the manifest as its last member, and
received into a directory: the files first, each checked against the manifest once it has come,
and the manifest written last. A stream cut short (the service or the connection died) leaves
files without a manifest, which `restore` refuses."""

import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, cast

from app.backup.errors import BackupError
from app.backup.files import BLOCK, write_block
from app.backup.make import start_destination
from app.backup.manifest import MANIFEST, Manifest, files_under
from app.failpoints import failpoint

if TYPE_CHECKING:
    import httpx

_RECORD = tarfile.BLOCKSIZE  # 512


def tar_stream(root: Path) -> Iterator[bytes]:
    """The files under `root` as a tar archive (ustar/pax), the manifest last."""
    for name in [*files_under(root), MANIFEST]:
        path = root / name
        info = tarfile.TarInfo(name)
        info.size = path.stat().st_size
        info.mode = 0o644
        yield info.tobuf(tarfile.PAX_FORMAT)
        with path.open("rb") as data:
            while block := data.read(BLOCK):
                yield block
        if info.size % _RECORD:
            yield b"\0" * (_RECORD - info.size % _RECORD)
        failpoint("backup_sent_file")
    yield b"\0" * (2 * _RECORD)


class _Reader:
    """A file-like `read` over an iterator of byte blocks (for tarfile's stream mode)."""

    def __init__(self, blocks: Iterable[bytes]) -> None:
        self._blocks = iter(blocks)
        self._block = b""
        self._at = 0

    def read(self, size: int = -1) -> bytes:
        parts = []
        wanted = size
        while wanted:
            if self._at == len(self._block):
                block = next(self._blocks, None)
                if block is None:
                    break
                self._block, self._at = block, 0
                continue
            left = len(self._block) - self._at
            taken = left if wanted < 0 else min(wanted, left)
            parts.append(self._block[self._at : self._at + taken])
            self._at += taken
            wanted = wanted - taken if wanted > 0 else wanted
        return b"".join(parts)


def _member_path(dest: Path, member: tarfile.TarInfo) -> Path:
    """Where a member goes: regular files below `dest` only."""
    name = PurePosixPath(member.name)
    if not member.isfile() or name.is_absolute() or ".." in name.parts:
        raise BackupError(f"the backup stream holds an entry this release never sends: {name}")
    return dest.joinpath(*name.parts)


def receive(blocks: Iterable[bytes], dest: Path) -> Manifest:
    """Unpack a `tar_stream` into `dest` (new or empty); the manifest is written once every file
    matched it."""
    start_destination(dest)
    manifest_text: str | None = None
    try:
        with tarfile.open(
            fileobj=cast(IO[bytes], _Reader(blocks)), mode="r|", bufsize=BLOCK
        ) as archive:
            for member in archive:
                data = archive.extractfile(member)
                path = _member_path(dest, member)
                if data is None:
                    continue
                if member.name == MANIFEST:
                    manifest_text = data.read().decode("utf-8")
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("wb") as out:
                    while block := data.read(BLOCK):
                        write_block(out, block)
                    out.truncate(member.size)
                failpoint("backup_received_file")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BackupError(f"the backup stream broke off ({exc}): {dest} is incomplete") from exc
    if manifest_text is None:
        raise BackupError(f"the backup stream ended before its manifest: {dest} is incomplete")
    manifest = Manifest.from_json(manifest_text, "the received manifest")
    manifest.verify(dest)
    manifest.write(dest)
    return manifest


def download(url: str, token: str, dest: Path) -> Manifest:
    """A backup of the service at `url` (`POST /api/v1/admin/backup`) into `dest`. Only the
    command imports the HTTP client: the service, which serves this module's stream, has none."""
    import httpx

    endpoint = f"{url.rstrip('/')}/api/v1/admin/backup"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.stream(
            "POST", endpoint, headers=headers, timeout=httpx.Timeout(30.0, read=None)
        ) as answer:
            if answer.status_code != 200:
                answer.read()
                raise BackupError(f"the service at {url} refused the backup: {_reason(answer)}")
            return receive(answer.iter_bytes(BLOCK), dest)
    except httpx.HTTPError as exc:
        raise BackupError(f"the service at {url} did not answer the backup: {exc}") from exc


def _reason(answer: "httpx.Response") -> str:
    try:
        return f"{answer.status_code} {answer.json()['error']['message']}"
    except (ValueError, KeyError, TypeError):
        return f"{answer.status_code} {answer.text[:200]}"
