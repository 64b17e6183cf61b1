"""qdrant-client's models without its clients, for the engine process and for `serve` on the
embedded engine.

`import qdrant_client` runs the package's `__init__`, which imports both clients (httpx, grpc,
the generated REST and async APIs), and `qdrant_client.http`'s, which rebuilds each of its ~400
models: ~0.35 s of an engine's start before it can open its shard, ~0.55 s of `serve`'s before
`/readyz`. Those processes only build, pickle and read the REST models, so they register the
package (and `qdrant_client.http`) as bare namespaces first; their submodules import as usual.
Models whose annotations name later classes are completed by pydantic when first built.

The service imports them as `qdrant_client.http.models`, the module that defines them:
`qdrant_client.models` adds the gRPC conversions and fastembed's types (~0.14 s a process)."""

import importlib.util
import sys
import types


def import_models_only() -> None:
    """In a process that has not imported qdrant_client yet (an ImportError names any use of
    the clients afterwards)."""
    if "qdrant_client" in sys.modules:
        return
    spec = importlib.util.find_spec("qdrant_client")
    assert spec is not None and spec.submodule_search_locations is not None
    root = spec.submodule_search_locations[0]
    for name, path in (("qdrant_client", root), ("qdrant_client.http", f"{root}/http")):
        package = types.ModuleType(name)
        package.__path__ = [path]
        sys.modules[name] = package
