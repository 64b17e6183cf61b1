"""The README and the docs link only to files inside the repository, and those files exist."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    targets = [t.split("#")[0] for t in LINK.findall(page.read_text(encoding="utf-8"))]
    local = [t for t in targets if t and not re.match(r"[a-z]+://", t)]
    for target in local:
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name} links outside the repo: {target}"
        assert resolved.exists(), f"{page.name} links to a missing file: {target}"


def test_the_contract_and_the_design_are_in_the_repository() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/api.md)" in readme and "(docs/design.md)" in readme
    assert "../shared" not in readme
