"""Query parameters are given once each: Starlette keeps the last of a repeated one, so
`tags=a&tags=b` would silently filter on `b` alone."""

from collections.abc import Collection

from starlette.datastructures import QueryParams

from app.errors import InvalidRequest


def refuse_repeated(params: QueryParams, repeatable: Collection[str] = ()) -> None:
    """A 400 naming the first parameter given twice that is not one of `repeatable`."""
    hint = (
        f"only {' and '.join(repeatable)} repeat"
        if repeatable
        else "a list is one value, its items separated by commas or newlines"
    )
    seen: set[str] = set()
    for name, _ in params.multi_items():
        if name in seen and name not in repeatable:
            raise InvalidRequest(f"{name} is given more than once: give it once ({hint})", name)
        seen.add(name)
