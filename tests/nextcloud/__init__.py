"""A Nextcloud-dialect test server, and fixtures for two real DAV servers (WsgiDAV, Radicale).

The Nextcloud connector is tested against `server.NextcloudDialect`, a small ASGI app that
answers in Nextcloud's shapes (WebDAV, OCS, Deck, CalDAV, Login Flow v2, webhook_listeners)
with a Python control API that changes the world it serves. Each module's docstring names the
Nextcloud documentation or source it follows.
"""
