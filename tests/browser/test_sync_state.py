"""The page shows the signed-in user's Nextcloud sync beside their name: a real `serve --dev`
with the connector on the Nextcloud dialect, in headless Chromium."""

from pathlib import Path

import httpx
from playwright.sync_api import Browser, expect

from bench.harness.demo_server import demo_server
from tests.browser.conftest import DESKTOP, assert_clean, watch
from tests.nextcloud.connector_helpers import SECRET_KEY
from tests.nextcloud.server import NextcloudDialect


def test_the_page_shows_the_users_nextcloud_sync_state(browser: Browser, tmp_path: Path) -> None:
    with NextcloudDialect() as nc:
        nc.add_user("dev")  # the user `serve --dev`'s token names
        nc.put("dev", "Documents/a.txt", b"the first file")
        nc.put("dev", "Documents/b.txt", b"the second file")
        env = {"SEARCH_NEXTCLOUD_URL": nc.url, "SEARCH_SECRET_KEY": SECRET_KEY}
        with demo_server(tmp_path / "data", env=env) as server:
            headers = {"Authorization": f"Bearer {server.token}"}
            body = {"login_name": "dev", "app_password": nc.app_password("dev")}
            response = httpx.post(
                f"{server.base}/api/v1/nextcloud/users", json=body, headers=headers, timeout=30
            )
            assert response.status_code == 201, response.text
            page = browser.new_page(viewport=DESKTOP)  # type: ignore[arg-type]
            watched = watch(page)
            page.goto(server.link)  # while the first index runs, or once it is done
            expect(page.locator("#sync-state")).to_contain_text("Nextcloud: ")
            expect(page.locator("#sync-state")).to_have_text(
                "Nextcloud: up to date (2 files)", timeout=20_000
            )
            assert page.locator("#sync-state").get_attribute("data-state") == "ok"
            assert_clean(watched)
            page.close()
