"""Verify-on-read's connection to Nextcloud over TLS, measured in process:

    .venv/bin/python -m bench.connector.connections [--rounds 8] [--verifies 100]

The Nextcloud dialect (tests/nextcloud) on a loopback port with a self-signed certificate made
for the run (added to the TLS context the clients share), one connected user, ten files.
Alternated rounds of `--verifies` verifications of the ten files, two ways:

- `client_a_search`: what verify-on-read did before it kept clients: a verifier of its own a
  search (the user's record read, the app password unsealed, a client built, one SEARCH, the
  client closed: a TCP and a TLS handshake each);
- `kept`: NextcloudVerifier, which keeps the user's client and its open connection.

Wall ms and this thread's CPU ms a verification (the dialect's share runs on its own thread),
medians of the rounds, and the connections the dialect saw. Results:
bench/results/connector-connections.json."""

import argparse
import datetime
import ipaddress
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from app.nextcloud.client import tls_context
from app.nextcloud.ledger import Ledger
from app.nextcloud.vault import Vault
from app.nextcloud.verify import NextcloudVerifier
from bench.harness.results import RESULTS, load_average, machine, write_results
from tests.nextcloud.server import NextcloudDialect

USER, LOGIN = "alice-uuid", "alice@example.org"
SECRET = "bench-connections-secret-key-0123456789"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (RSA 2048, as many servers still have)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert, key_file = folder / "cert.pem", folder / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    return cert, key_file


def client_a_search(base_url: str, ledger: Ledger, vault: Vault) -> Callable[[list[str]], set[str]]:
    """A verifier of its own a search: its client made for that search and closed after it."""

    def verify(fileids: list[str]) -> set[str]:
        verifier = NextcloudVerifier(base_url, ledger, vault, 10.0)
        try:
            return kept(verifier)(fileids)
        finally:
            verifier.close()

    return verify


def kept(verifier: NextcloudVerifier) -> Callable[[list[str]], set[str]]:
    def verify(fileids: list[str]) -> set[str]:
        gone = verifier.statuses(USER, [("file", i) for i in fileids], verifier.budget())
        return set(fileids) - {doc_id for _, doc_id in gone}

    return verify


def measure(rounds: int, verifies: int, folder: Path) -> dict[str, Any]:
    cert, key = self_signed(folder)
    tls_context().load_verify_locations(cert)  # the one context every Nextcloud client uses
    nc = NextcloudDialect()
    nc.start(tls=(cert, key))
    try:
        nc.add_user(USER, login=LOGIN)
        fileids = [str(nc.put(USER, f"Docs/file{i}.txt", b"hello").fileid) for i in range(10)]
        ledger, vault = Ledger(folder / "ledger.db"), Vault(SECRET)
        ledger.save_user(USER, LOGIN, vault.seal(nc.app_password(USER)))
        verifier = NextcloudVerifier(nc.url, ledger, vault, 10.0)
        ways = {"client_a_search": client_a_search(nc.url, ledger, vault), "kept": kept(verifier)}
        times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in ways}
        connections: dict[str, int] = {}
        for verify in ways.values():  # a first one each: TLS context, imports
            assert verify(fileids) == set(fileids)
        for round_ in range(rounds):
            for name in sorted(ways, reverse=round_ % 2 == 1):
                nc.log.reset()
                wall, cpu = time.perf_counter(), time.thread_time()
                for _ in range(verifies):
                    assert ways[name](fileids) == set(fileids)
                times[name][0].append((time.perf_counter() - wall) * 1000 / verifies)
                times[name][1].append((time.thread_time() - cpu) * 1000 / verifies)
                connections[name] = len({r.peer for r in nc.log.snapshot()})
        verifier.close()
        ledger.close()
    finally:
        nc.stop()
    return {
        name: {
            "wall_ms": round(statistics.median(wall), 3),
            "cpu_ms": round(statistics.median(cpu), 3),
            "connections_last_round": connections[name],
        }
        for name, (wall, cpu) in times.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--verifies", type=int, default=100, help="a round, each way")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    started = load_average()
    with tempfile.TemporaryDirectory() as folder:
        result = measure(args.rounds, args.verifies, Path(folder))
    result |= {"rounds": args.rounds, "verifies": args.verifies}
    result |= {"load_average": {"start": started, "end": load_average()}, "machine": machine()}
    write_results(args.out / "connector-connections.json", result)


if __name__ == "__main__":
    main()
