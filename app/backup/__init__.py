"""Backups of the index and their restore: `astrolabe-search backup DEST` / `restore SRC`
(docs/deployment.md, "Backup and restore")."""
