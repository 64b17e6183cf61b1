"""Which legacy file a compound file (OLE2, olefile) is: a Word 97-2003 document holds a
WordDocument stream, an Outlook item its property streams. Excel and PowerPoint files, and any
other compound file, are none of these."""

import struct
from pathlib import Path

import olefile

from app.extract.errors import Unreadable
from app.extract.model import Format

_MSG_PROPERTIES = "__properties_version1.0"


def sniff(path: Path) -> Format | None:
    try:
        ole = olefile.OleFileIO(str(path))
    except (OSError, ValueError, struct.error, IndexError) as exc:
        raise Unreadable(f"the file is a damaged compound (OLE2) file: {exc}") from exc
    with ole:
        if ole.exists("WordDocument"):
            return Format.DOC
        if ole.exists(_MSG_PROPERTIES) and any(
            entry[0].startswith("__substg1.0_") for entry in ole.listdir(streams=True)
        ):
            return Format.MSG
    return None
