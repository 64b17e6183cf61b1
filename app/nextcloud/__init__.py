"""The Nextcloud connector: the service fills and refreshes its index from a Nextcloud instance.

client     one user's HTTP to Nextcloud: auth, retries on 429/503, revoked on 401/403
dav        PROPFIND bodies and the multistatus they answer, as entries
shares     the OCS share lists, and the readers they give a path
vault      app passwords encrypted at rest (SEARCH_SECRET_KEY)
ledger     what the connector knows, in SQLite under the data directory (survives kill -9)
walker     the ETag walk: one PROPFIND when nothing changed, Depth 1 only into what did
files      a changed file -> downloaded, extracted -> a document (or a skip with its reason)
apps       Deck cards and calendar events, each app isolated
sync       a user's tick, and the connector that runs every user's
webhooks   Nextcloud's webhook envelope -> which user to look at now
"""
