"""Write the app's OpenAPI document to openapi/openapi.json (the committed contract)."""

import json
import sys
from pathlib import Path

from app.config import Settings
from app.main import create_app

TARGET = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"


def render() -> str:
    schema = create_app(Settings(jwt_secret="unused")).openapi()
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)
