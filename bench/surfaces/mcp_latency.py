"""Latency of the MCP `search` tool against the same search over HTTP, on the demo corpus.

Starts `astrolabe-search serve` on the demo data directory (loads the corpus first if needed),
then runs every query of bench.surfaces.http_latency under each filter scenario several times, three
ways, interleaved: `POST /api/v1/search`; a `tools/call` of `search` as one JSON-RPC POST to
/mcp (the transport alone); and through the SDK's Streamable HTTP client, one session for all
calls (what an assistant's MCP client pays). Reports medians.

    .venv/bin/python -m bench.surfaces.mcp_latency [--data-dir DIR] [--rounds 5]
"""

import asyncio
import statistics
import time
from typing import Any

import httpx
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from bench.surfaces.http_latency import (
    QUERIES,
    demo,
    parse_arguments,
    scenarios,
    timed_search,
)

HEADERS = {"Authorization": "Bearer bench"}
MCP_HEADERS = HEADERS | {"Accept": "application/json, text/event-stream"}


def timed_rpc(client: httpx.Client, base: str, arguments: dict[str, Any]) -> float:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search", "arguments": arguments},
    }
    started = time.perf_counter()
    response = client.post(f"{base}/mcp", json=call, headers=MCP_HEADERS)
    response.raise_for_status()
    if "error" in response.json() or response.json()["result"].get("isError"):
        raise RuntimeError(response.text)
    return (time.perf_counter() - started) * 1000


async def samples(base: str, bodies: list[dict[str, Any]]) -> list[tuple[float, float, float]]:
    """(HTTP, JSON-RPC, SDK) per body, interleaved so that load on the machine hits all three."""
    rows = []
    async with (
        httpx2.AsyncClient(headers=HEADERS) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as sdk,
    ):
        with httpx.Client(headers=HEADERS, timeout=30) as client:
            for body in bodies:
                plain = timed_search(client, base, body)
                rpc = timed_rpc(client, base, body)
                started = time.perf_counter()
                result = await sdk.call_tool("search", body)
                rows.append((plain, rpc, (time.perf_counter() - started) * 1000))
                if result.is_error:
                    raise RuntimeError(str(result.content))
    return rows


def report(base: str, rounds: int) -> None:
    asyncio.run(samples(base, [{"query": q} for q in QUERIES]))  # warm-up: first-call costs
    print("| filter | HTTP search | MCP, one JSON-RPC POST | MCP, SDK client | SDK - HTTP |")
    print("|---|---|---|---|---|")
    for name, filters in scenarios().items():
        bodies = [{"query": q, **filters} for _ in range(rounds) for q in QUERIES]
        rows = asyncio.run(samples(base, bodies))
        http, rpc, sdk = (statistics.median(column) for column in zip(*rows, strict=True))
        overhead = statistics.median(s - h for h, _, s in rows)
        print(f"| {name} | {http:.1f} ms | {rpc:.1f} ms | {sdk:.1f} ms | {overhead:+.1f} ms |")


def main() -> None:
    args = parse_arguments()
    with demo(args.data_dir) as (base, _):
        report(base, args.rounds)


if __name__ == "__main__":
    main()
