"""The Nextcloud world the connector benchmark indexes, in the dialect (tests/nextcloud), and a
clock on the dialect's requests.

`files` files over three users (u0, u1, u2), ten a folder: each user's folders are
`top<t>/sub<s>/folder<k>` (ten folders a sub, ten subs a top) and one deep chain
`deep/l1/.../l7` (its ten files at depth 9, the root at 0). Each user shares `top0` with the
next user and `top1` with the group `team` (all three): every user's walk also lists the
others' shared tops, and the same file (one fileid) is seen by two or three users. Mostly small
plain-text files (40-160 words of generated prose), with 2 % each of PDF, DOCX, ODT and HTML and
4 % Markdown, written by the extractor tests' own writers (tests/extract/samples.py)."""

import base64
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tests.extract import samples
from tests.nextcloud.dialect import SHARE_GROUP, SHARE_USER, NextcloudDialect

USERS = ("u0", "u1", "u2")
GROUP = "team"
PER_FOLDER = 10
DEEP = "deep/l1/l2/l3/l4/l5/l6/l7"  # 8 folders: a file in it is at depth 9
SEED = 20261204
VARIANTS = 12  # distinct bodies per binary format (the rest reuse them)
SAMPLE_TEXTS = 400  # texts kept for the model's own rate
VOCABULARY = (
    "harbour lantern orchard turbine compass ledger meadow signal archive budget quarterly "
    "report meeting minutes garden river bridge council permit invoice contract supplier "
    "schedule winter summer spring autumn station railway engine copper silver market "
    "village library museum theatre concert festival school teacher student research "
    "experiment sample measure result figure table chapter draft review approve decision "
    "project milestone deadline release version feature defect customer support ticket "
    "network server storage backup restore migration database index search query answer "
    "travel journey ticket hotel flight airport luggage passport visa holiday weather "
    "forest mountain valley glacier island coast lighthouse fisherman boat anchor sail "
    "kitchen recipe flour butter sugar bread oven dinner breakfast coffee tea kettle "
    "painting canvas colour portrait gallery sculpture photograph camera lens shutter "
    "planet orbit telescope galaxy comet nebula satellite rocket launch mission crew "
    "hospital doctor nurse patient clinic vaccine therapy surgery recovery health "
    "factory worker shift machine tool repair maintenance safety helmet crane warehouse"
)
WORDS = VOCABULARY.split()
QUERIES = [
    "quarterly budget report",
    "harbour lighthouse boat",
    "database backup migration",
    "telescope galaxy orbit",
    "recipe butter flour",
    "council permit bridge",
    "hospital patient therapy",
    "railway station engine",
    "museum gallery painting",
    "project milestone deadline",
]


def prose(rng: random.Random, words: int) -> str:
    sentences, left = [], words
    while left > 0:
        n = min(left, rng.randint(6, 14))
        sentence = " ".join(rng.choice(WORDS) for _ in range(n))
        sentences.append(sentence.capitalize() + ".")
        left -= n
    return " ".join(sentences)


def _binary_bodies(rng: random.Random) -> dict[str, list[bytes]]:
    """A few bodies of each binary format (each a page or three of prose)."""
    bodies: dict[str, list[bytes]] = {"pdf": [], "docx": [], "odt": [], "html": []}
    for _ in range(VARIANTS):
        paragraphs = [prose(rng, rng.randint(60, 140)) for _ in range(rng.randint(1, 3))]
        bodies["pdf"].append(samples.pdf(paragraphs))
        bodies["docx"].append(samples.docx_file(paragraphs))
        bodies["odt"].append(samples.odt_file(paragraphs))
        bodies["html"].append(samples.html_file(paragraphs))
    return bodies


def body(n: int, rng: random.Random, binaries: dict[str, list[bytes]]) -> tuple[str, bytes]:
    """The n-th file's extension and bytes."""
    kind = n % 50
    if kind < 4:
        ext = ("pdf", "docx", "odt", "html")[kind]
        return ext, binaries[ext][rng.randrange(VARIANTS)]
    text = prose(rng, rng.randint(40, 160))
    if kind < 6:
        return "md", f"# Notes {n}\n\n{text}\n".encode()
    return "txt", text.encode()


@dataclass
class World:
    files: int
    by_format: dict[str, int] = field(default_factory=dict)
    folders: int = 0
    deep_files: dict[str, str] = field(default_factory=dict)  # user -> a private file at depth 9
    texts: list[str] = field(default_factory=list)  # what the indexer embeds, for the first files
    build_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "users": len(USERS),
            "leaf_folders": self.folders,
            "by_format": dict(sorted(self.by_format.items())),
            "shares": "each user: top0 with the next user, top1 with the group of all three",
            "deep_file_depth": DEEP.count("/") + 2,
            "build_s": round(self.build_s, 1),
        }


def leaf_folder(k: int) -> str:
    return f"top{k // 100}/sub{(k // 10) % 10}/folder{k}"


def build(nc: NextcloudDialect, files: int) -> World:
    """`files` files over the three users (see the module's docstring), shares included."""
    started = time.perf_counter()
    rng = random.Random(SEED)
    binaries = _binary_bodies(rng)
    world = World(files)
    for uid in USERS:
        nc.add_user(uid, groups=(GROUP,))
    n = 0
    for u, uid in enumerate(USERS):
        own = files // len(USERS) + (1 if u < files % len(USERS) else 0)
        folders = [DEEP] + [leaf_folder(k) for k in range(-(-own // PER_FOLDER) - 1)]
        world.folders += len(folders)
        for i in range(own):
            ext, data = body(n, rng, binaries)
            folder = folders[i // PER_FOLDER]
            name = f"{folder}/file{i % PER_FOLDER}-{n}.{ext}"
            nc.put(uid, name, data)
            if ext in ("txt", "md") and len(world.texts) < SAMPLE_TEXTS:
                world.texts.append(f"{name.rpartition('/')[2]}\n{data.decode()}")
            world.by_format[ext] = world.by_format.get(ext, 0) + 1
            if folder == DEEP and ext == "txt" and uid not in world.deep_files:
                world.deep_files[uid] = name
            n += 1
    for u, uid in enumerate(USERS):
        tops = {p.split("/")[0] for p in _top_paths(nc, uid)}
        if "top0" in tops:
            nc.share(uid, "top0", SHARE_USER, USERS[(u + 1) % len(USERS)])
        if "top1" in tops:
            nc.share(uid, "top1", SHARE_GROUP, GROUP)
    world.build_s = time.perf_counter() - started
    return world


def _top_paths(nc: NextcloudDialect, uid: str) -> list[str]:
    return list(nc.node(uid, "").children)


@dataclass(frozen=True)
class Timing:
    method: str
    path: str
    user: str | None
    depth: str | None  # the Depth header of a PROPFIND
    started: float  # time.time() when the request arrived
    seconds: float  # until its last byte was handed to the server


class TimedApp:
    """The dialect's ASGI app with a clock on every request (its log has none)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.timings: list[Timing] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, clock = time.time(), time.perf_counter()
        try:
            await self.app(scope, receive, send)
        finally:
            seconds = time.perf_counter() - clock
            depth = _header(scope, b"depth")
            timing = Timing(scope["method"], scope["path"], _user(scope), depth, started, seconds)
            with self._lock:
                self.timings.append(timing)

    def since(self, moment: float) -> list[Timing]:
        with self._lock:
            return [t for t in self.timings if t.started >= moment]


def _header(scope: Any, wanted: bytes) -> str | None:
    for name, value in scope["headers"]:
        if name.lower() == wanted:
            return str(value.decode("latin-1"))
    return None


def _user(scope: Any) -> str | None:
    """The login of a Basic-authenticated request (the login is the user id here)."""
    value = _header(scope, b"authorization") or ""
    if value[:6].lower() != "basic ":
        return None
    try:
        return base64.b64decode(value[6:]).decode().partition(":")[0]
    except ValueError:
        return None


def timed_dialect() -> tuple[NextcloudDialect, TimedApp]:
    """A dialect (not started) whose requests are timed."""
    nc = NextcloudDialect()
    timed = TimedApp(nc.app)
    nc.app = timed  # type: ignore[assignment]
    return nc, timed
