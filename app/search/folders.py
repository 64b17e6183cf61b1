"""The folder tree: the folders directly below a parent, from per-folder document counts."""

from dataclasses import dataclass


@dataclass(frozen=True)
class FolderNode:
    path: str
    name: str
    count: int  # visible documents under it (any depth) that match the other filters
    has_children: bool


def child_folders(parent: str, counts: dict[str, int]) -> list[FolderNode]:
    """The direct children of `parent` among `counts` (folders below it with their counts),
    by name; a child has children when a deeper folder below it is counted too."""
    prefix = parent.rstrip("/") + "/"
    children = [
        path
        for path in counts
        if path.startswith(prefix) and len(path) > len(prefix) and "/" not in path[len(prefix) :]
    ]
    nodes = [
        FolderNode(
            path=path,
            name=path[len(prefix) :],
            count=counts[path],
            has_children=any(other.startswith(path + "/") for other in counts),
        )
        for path in children
    ]
    return sorted(nodes, key=lambda node: (node.name.casefold(), node.name))
