"""Deep links: a document's own `url`, else one built from its doc type's template
(`SEARCH_LINK_TEMPLATE_FILE=https://cloud.example/f/{doc_id}`). Values are percent-encoded
into the template, and a template must itself be an http(s) URL, so a link can only ever be
http(s): never `javascript:`."""

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from app.store import fields


class LinkTemplates:
    def __init__(self, templates: Mapping[str, str] | None = None) -> None:
        self.templates = {doc_type.lower(): t for doc_type, t in (templates or {}).items()}

    def url(self, payload: Mapping[str, Any]) -> str | None:
        """The document's link: its own, else its doc type's template filled in (None when
        there is neither, or the template needs a file path the document lacks)."""
        own = payload.get(fields.URL)
        if own:
            return str(own)
        template = self.templates.get(str(payload.get(fields.DOC_TYPE)))
        if template is None:
            return None
        file_path = payload.get(fields.FILE_PATH)
        if file_path is None and "{file_path}" in template:
            return None
        return template.format(
            doc_type=quote(str(payload.get(fields.DOC_TYPE)), safe=""),
            doc_id=quote(str(payload.get(fields.DOC_ID)), safe=""),
            file_path=quote(str(file_path or ""), safe="/"),
        )
