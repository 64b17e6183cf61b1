"""The MCP surface: the search tools for AI assistants (`server`, `tools`), mounted at /mcp."""
