"""The ONE filter builder: principal + FilterSpec -> engine conditions, for every search path."""

from qdrant_client import models

from app.auth import Principal
from app.filters.spec import FilterSpec
from app.store.fields import (
    ACCESS_FIELD,
    KIND_CHUNK,
    KIND_FIELD,
)


def access_principals(principal: Principal) -> list[str]:
    """The ACL entries that let this user read a document (owner is stored as `user:<owner>`)."""
    return [f"user:{principal.user}"] + [f"group:{group}" for group in principal.groups]


def build_base_filter_conditions(principal: Principal, spec: FilterSpec) -> list[models.Condition]:
    """Conditions that every result must meet: searchable chunk, readable, inside the filters."""
    conditions: list[models.Condition] = [
        models.FieldCondition(key=KIND_FIELD, match=models.MatchValue(value=KIND_CHUNK)),
        models.FieldCondition(
            key=ACCESS_FIELD, match=models.MatchAny(any=access_principals(principal))
        ),
    ]
    if spec.doc_types:
        conditions.append(_any_of("doc_type", spec.doc_types))
    if spec.modified_after is not None or spec.modified_before is not None:
        conditions.append(
            models.FieldCondition(
                key="modified_at",
                range=models.Range(gte=spec.modified_after, lte=spec.modified_before),
            )
        )
    if spec.path_prefixes:
        conditions.append(_any_of("folders", spec.path_prefixes))
    if spec.tags:
        conditions.append(_any_of("tags", spec.tags))
    conditions.extend(
        models.FieldCondition(key="tags", match=models.MatchValue(value=tag))
        for tag in spec.tags_all
    )
    if spec.categories:
        conditions.append(_any_of("category", spec.categories))
    if spec.owners:
        conditions.append(_any_of("owner", spec.owners))
    return conditions


def build_filter(principal: Principal, spec: FilterSpec, *extra: models.Condition) -> models.Filter:
    return models.Filter(must=[*build_base_filter_conditions(principal, spec), *extra])


def _any_of(key: str, values: tuple[str, ...]) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))
