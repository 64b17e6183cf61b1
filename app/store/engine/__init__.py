"""The engine wing: the embedded engine (Qdrant Edge) run in processes of its own, as `serve`
runs it. Qdrant Edge holds the interpreter for every call and builds its HNSW graph only in an
`optimize` that holds it for minutes, so under `serve` the shard lives in a child process and
its graph is rebuilt on a copy in a second one.

    HTTP process                                      children (python -m app.engine_child)
    ───────────────────────────────────────────       ──────────────────────────────────────
    ProcessStore (process_store) ── wire ──────────►  ShardServer (shard_server): the served
      the Store the app uses; a connection per          generation; reads take turns
      thread, to the shard server serving now           (turnstile), searches that wait go
                                                        in one call (batching), writes pass
                                                        the gate
    Supervisor (supervisor): one thread that           ShardServer of a rebuild's copy:
      starts (launch) and watches the children           optimizes it, then follows the
      through handles (shard_process), restarts          served one's journal (journal,
      the served one, and drives rebuilds and            replay) until the handover
      handovers (rebuild)

Names: the Qdrant engine is Qdrant Edge (in process: `EdgeStore`, `app.store.edge`) or a Qdrant
server (`ServerStore`); a shard server is the child's server of one shard; the supervisor owns
the children; a shard process is its handle to one child; `ProcessStore` is the store that
speaks the wire. Open it through `app.store.open` (`Use.SERVE`), never directly."""
