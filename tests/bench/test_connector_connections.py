import json
from pathlib import Path

from bench.connector.connections import main


def test_verify_over_tls_keeps_one_connection_where_a_client_a_search_opened_one_each(
    tmp_path: Path,
) -> None:
    main(["--rounds", "2", "--verifies", "3", "--out", str(tmp_path)])
    result = json.loads((tmp_path / "connector-connections.json").read_text())
    assert result["client_a_search"]["connections_last_round"] == 3
    assert result["kept"]["connections_last_round"] == 1
    assert result["kept"]["wall_ms"] > 0 and result["client_a_search"]["wall_ms"] > 0
