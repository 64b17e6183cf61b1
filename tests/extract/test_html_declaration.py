"""XHTML as EPUB chapters and XHTML pages start: with an XML declaration naming an encoding."""

from app.extract.html import html_text


def test_an_xml_declaration_with_an_encoding_does_not_hide_the_text() -> None:
    page = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter</title></head>'
        "<body><p>The lighthouse keeper wrote every night.</p></body></html>"
    )
    for raw in (page, page.encode()):
        extracted = html_text(raw)
        assert extracted.title == "Chapter"
        assert "lighthouse keeper" in extracted.text
