"""`python -m app.extract.worker FD MAX_BYTES MAX_ENTRIES`: one extraction worker, answering on
the socket FD (see app.extract.sandbox)."""

import sys
from multiprocessing.connection import Connection

from app.extract.archive import ArchiveLimits
from app.extract.sandbox import serve


def main(argv: list[str]) -> None:
    fd, max_bytes, max_entries = (int(value) for value in argv)
    serve(Connection(fd), ArchiveLimits(max_bytes, max_entries))


if __name__ == "__main__":
    main(sys.argv[1:])
