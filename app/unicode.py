"""Request text must be proper Unicode. JSON can carry lone UTF-16 surrogates (`"\\ud800"`),
which are not characters: no engine, encoder or log line can take them. Every request model
refuses them at the edge, naming the field, before any part of the service sees the text."""

import re
from typing import Any

from pydantic import BaseModel, model_validator

from app.errors import InvalidRequest

_SURROGATE = re.compile("[\ud800-\udfff]")


def first_surrogate(value: object, path: str = "") -> str | None:
    """The path (`documents[0].tags[1]`) of the first string or key holding a lone surrogate."""
    if isinstance(value, str):
        return path if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            found = name if _SURROGATE.search(str(key)) else first_surrogate(item, name)
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = first_surrogate(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


class ProperUnicode(BaseModel):
    """Base of the request models: a lone surrogate anywhere in the input is a 400."""

    @model_validator(mode="before")
    @classmethod
    def _refuse_surrogates(cls, data: Any) -> Any:
        path = first_surrogate(data)
        if path is not None:
            raise InvalidRequest(f"{path}: not valid Unicode (a lone UTF-16 surrogate)", path)
        return data
