"""The service's surfaces as a client meets them, on the demo corpus: cold start and search
latency over HTTP (`http_latency`), the MCP `search` tool against the same search over HTTP
(`mcp_latency`), and the search page in headless Chromium, from a key to rendered results, with
the README's screenshots (`page`)."""
