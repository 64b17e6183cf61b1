import socket

from bench.harness.loopback import free_port


def test_free_ports_are_distinct_bindable_and_below_the_ephemeral_range() -> None:
    ports = [free_port() for _ in range(5)]
    assert len(set(ports)) == 5
    assert all(20000 <= port < 32768 for port in ports)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", ports[-1]))  # nobody holds it
