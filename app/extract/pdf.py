"""PDF, page by page (pypdf). A page that fails to parse is kept as an empty page, so the pages
after it keep their numbers; a file whose every page fails is unreadable."""

import logging
from pathlib import Path

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, PyPdfError

from app.extract.errors import Encrypted, Unreadable
from app.extract.model import Extracted, Format, paged

log = logging.getLogger(__name__)


def extract(path: Path) -> Extracted:
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise Encrypted("the PDF is password-protected: send it without a password")
        pages = list(reader.pages)
    except DependencyError as exc:
        raise Encrypted(f"the PDF's encryption is not supported: {exc}") from exc
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise Unreadable(f"the PDF is damaged: {type(exc).__name__}: {exc}") from exc
    texts: list[str] = []
    failed = 0
    for number, page in enumerate(pages, 1):
        try:
            texts.append(page.extract_text() or "")
        except Exception as exc:  # one bad page must not cost the others
            log.info("PDF page %d not read: %s: %s", number, type(exc).__name__, exc)
            texts.append("")
            failed += 1
    if pages and failed == len(pages):
        raise Unreadable("no page of the PDF could be read")
    return paged(Format.PDF, texts, _title(reader))


def _title(reader: PdfReader) -> str | None:
    try:
        metadata = reader.metadata
        return metadata.title if metadata is not None else None
    except Exception:  # a damaged /Info dictionary costs the title only
        return None
