"""What a browser loads: the search page's files and the OpenAPI explorers (`/docs`, `/redoc`),
every asset served by the service itself so both work with no internet."""

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
# Swagger UI and Redoc builds, shipped as files inside the fastapi-offline wheel.
EXPLORER_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"
EXPLORER_URL = "/static/explorer"
# Redoc's sidebar shows a logo from its vendor's CDN; offline it comes from here instead.
REDOC_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def _offline_redoc() -> bytes:
    script = (EXPLORER_DIR / "redoc.standalone.js").read_text(encoding="utf-8")
    return script.replace(REDOC_CDN_LOGO, f"{EXPLORER_URL}/favicon.png").encode()


def install_pages(app: FastAPI) -> None:
    """Mount the static files and add the explorers. The app must be built with
    `docs_url=None, redoc_url=None` (FastAPI's own explorers load from a CDN)."""
    redoc_script = _offline_redoc()

    # Routes and the more specific mount first: Starlette takes the first match.
    @app.get(f"{EXPLORER_URL}/redoc.standalone.js", include_in_schema=False)
    def redoc_standalone() -> Response:
        return Response(redoc_script, media_type="text/javascript")

    app.mount(EXPLORER_URL, StaticFiles(directory=EXPLORER_DIR), name="explorer")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} · API explorer",
            swagger_js_url=f"{EXPLORER_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{EXPLORER_URL}/swagger-ui.css",
            swagger_favicon_url=f"{EXPLORER_URL}/favicon.png",
            # No badge image from the public validator service.
            swagger_ui_parameters={"validatorUrl": None, "persistAuthorization": False},
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title} · API reference",
            redoc_js_url=f"{EXPLORER_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{EXPLORER_URL}/favicon.png",
            with_google_fonts=False,
        )
