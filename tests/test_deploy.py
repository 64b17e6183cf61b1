"""The deployment files (deploy/, Dockerfile) agree with the code: every SEARCH_* variable they
set exists in Settings, ports line up, probes hit routes the app serves, images are pinned.
No Docker engine or Kubernetes runs here: these checks are static."""

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.main import create_app
from tests.helpers import doc, index, running_app_on_engine_processes

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
PINNED_QDRANT = re.compile(r"^qdrant/qdrant:v\d+\.\d+\.\d+$")
QDRANT_HTTP_PORT = 6333
QDRANT_P2P_PORT = 6335


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _setting_names() -> set[str]:
    return {f"SEARCH_{name.upper()}" for name in Settings.model_fields}


def _app_paths() -> set[str]:
    app = create_app(Settings(jwt_secret="x" * 32))
    return set(app.openapi()["paths"])


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def _probe_url(healthcheck: dict[str, Any]) -> str:
    found = re.search(r"https?://[^'\" ]+", " ".join(healthcheck["test"]))
    if found is None:
        raise AssertionError(f"no URL in healthcheck {healthcheck['test']}")
    return found.group(0)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = _load(DEPLOY / "docker-compose.yml")
    return data


def _qdrant_nodes(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    services: dict[str, dict[str, Any]] = compose["services"]
    return {n: s for n, s in services.items() if str(s.get("image", "")).startswith("qdrant/")}


def _replicas(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    services: dict[str, dict[str, Any]] = compose["services"]
    return {n: s for n, s in services.items() if "build" in s}


def test_compose_runs_a_three_node_cluster_from_one_bootstrap_peer(
    compose: dict[str, Any],
) -> None:
    nodes = _qdrant_nodes(compose)
    assert len(nodes) == 3
    bootstrap = [name for name, node in nodes.items() if "--bootstrap" not in node["command"]]
    assert len(bootstrap) == 1, "exactly one node starts the cluster"
    peer_uri = f"http://{bootstrap[0]}:{QDRANT_P2P_PORT}"
    for name, node in nodes.items():
        assert PINNED_QDRANT.match(node["image"]), node["image"]
        assert node["environment"]["QDRANT__CLUSTER__ENABLED"] == "true"
        assert int(node["environment"]["QDRANT__CLUSTER__P2P__PORT"]) == QDRANT_P2P_PORT
        assert _option(node["command"], "--uri") == f"http://{name}:{QDRANT_P2P_PORT}"
        if name != bootstrap[0]:
            assert _option(node["command"], "--bootstrap") == peer_uri
            assert node["depends_on"][bootstrap[0]]["condition"] == "service_healthy"
        probe = " ".join(node["healthcheck"]["test"])
        assert f"/dev/tcp/127.0.0.1/{QDRANT_HTTP_PORT}" in probe and "GET /readyz" in probe


def test_compose_replicas_are_configured_with_real_settings(compose: dict[str, Any]) -> None:
    replicas = _replicas(compose)
    nodes = _qdrant_nodes(compose)
    assert len(replicas) >= 2
    hostnames = {replica.get("hostname", name) for name, replica in replicas.items()}
    assert len(hostnames) == len(replicas), "a replica's host name owns its ingest leases"
    paths = _app_paths()
    for name, replica in replicas.items():
        assert (DEPLOY / replica["build"]["context"] / replica["build"]["dockerfile"]).is_file()
        environment: dict[str, str] = replica["environment"]
        unknown = set(environment) - _setting_names()
        assert not unknown, f"{name} sets variables Settings does not read: {unknown}"
        qdrant = urlsplit(environment["SEARCH_QDRANT_URL"])
        assert qdrant.hostname in nodes and qdrant.port == QDRANT_HTTP_PORT
        assert replica["depends_on"][qdrant.hostname]["condition"] == "service_healthy"
        probe = urlsplit(_probe_url(replica["healthcheck"]))
        assert probe.path in paths
        assert str(probe.port) == _option(replica["command"], "--port")


def test_the_proxy_balances_over_every_replica(compose: dict[str, Any]) -> None:
    proxy = compose["services"]["proxy"]
    mounted = [v.split(":") for v in proxy["volumes"]]
    config_file = next(DEPLOY / host for host, target, *_ in mounted if target.endswith(".conf"))
    config = config_file.read_text(encoding="utf-8")
    upstream = set(re.findall(r"^\s*server\s+([\w.-]+:\d+)", config, re.MULTILINE))
    expected = {
        f"{name}:{_option(replica['command'], '--port')}"
        for name, replica in _replicas(compose).items()
    }
    assert upstream == expected
    listen = re.search(r"listen\s+(\d+);", config)
    assert listen is not None
    assert any(p.split(":")[-1] == listen.group(1) for p in proxy["ports"])
    body = re.search(r"client_max_body_size\s+(\d+)m;", config)
    assert body is not None
    assert int(body.group(1)) * 1024 * 1024 >= Settings.model_fields["max_body_bytes"].default
    assert urlsplit(_probe_url(proxy["healthcheck"])).path in _app_paths()


@pytest.fixture(scope="module")
def kubernetes() -> dict[str, dict[str, Any]]:
    text = (DEPLOY / "kubernetes" / "astrolabe.yaml").read_text(encoding="utf-8")
    return {doc["kind"]: doc for doc in yaml.safe_load_all(text)}


def test_kubernetes_probes_ports_and_env_match_the_app(
    kubernetes: dict[str, dict[str, Any]],
) -> None:
    deployment = kubernetes["Deployment"]
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["labels"] == deployment["spec"]["selector"]["matchLabels"]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    container = pod["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert str(ports["http"]) == _option(container["args"], "--port")
    paths = _app_paths()
    probes = [container[k] for k in ("startupProbe", "livenessProbe", "readinessProbe")]
    for probe in probes:
        assert probe["httpGet"]["path"] in paths
        assert probe["httpGet"]["port"] in ports
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    names = {e["name"] for e in container["env"]}
    assert names <= _setting_names(), names - _setting_names()
    service = kubernetes["Service"]
    assert service["spec"]["selector"] == pod["metadata"]["labels"]
    assert all(p["targetPort"] in ports for p in service["spec"]["ports"])
    env = {e["name"]: e.get("value") for e in container["env"]}
    scrape = pod["metadata"]["annotations"]
    assert scrape["prometheus.io/port"] == env["SEARCH_METRICS_PORT"] == str(ports["metrics"])
    assert "metrics" not in {p["targetPort"] for p in service["spec"]["ports"]}, "token-free"


def test_kubernetes_reaches_the_helm_installed_cluster(
    kubernetes: dict[str, dict[str, Any]], compose: dict[str, Any]
) -> None:
    values = _load(DEPLOY / "kubernetes" / "qdrant-values.yaml")
    assert values["replicaCount"] == 3
    assert values["config"]["cluster"]["enabled"] is True
    compose_tags = {node["image"].split(":")[1] for node in _qdrant_nodes(compose).values()}
    assert compose_tags == {values["image"]["tag"]}, "one Qdrant version everywhere"
    env = {
        e["name"]: e
        for e in kubernetes["Deployment"]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    url = urlsplit(env["SEARCH_QDRANT_URL"]["value"])
    assert url.hostname == values["fullnameOverride"] and url.port == QDRANT_HTTP_PORT
    assert values["apiKey"] is True  # the chart then writes Secret <fullname>-apikey/api-key
    key_ref = env["SEARCH_QDRANT_API_KEY"]["valueFrom"]["secretKeyRef"]
    assert key_ref == {"name": f"{values['fullnameOverride']}-apikey", "key": "api-key"}


def _dockerfile_stages() -> list[list[tuple[str, str]]]:
    """Instructions (keyword, argument) per stage, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    stages: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        keyword, _, argument = line.strip().partition(" ")
        if keyword.upper() == "FROM":
            stages.append([])
        stages[-1].append((keyword.upper(), argument.strip()))
    return stages


def test_dockerfile_is_multi_stage_non_root_with_a_healthcheck() -> None:
    stages = _dockerfile_stages()
    assert len(stages) >= 2
    build, final = stages[0], stages[-1]
    assert any(k == "COPY" and a.startswith("--from=") for k, a in final)
    users = [a for k, a in final if k == "USER"]
    assert users and users[-1] not in ("root", "0")
    assert not any(k == "RUN" and "pip install" in a for k, a in final), "build deps stay behind"
    assert [a for k, a in final if k == "COPY"] == ["--from=build /opt/venv /opt/venv"]
    serving = next(a for k, a in build if k == "RUN" and "/opt/venv/bin/pip install" in a)
    assert serving.endswith("/opt/venv/bin/pip install ."), "serving installs no extra"
    assert any(k == "RUN" and '! /opt/venv/bin/python -c "import torch"' in a for k, a in build)
    assert any(k == "RUN" and "HF_HUB_OFFLINE=1" in a and "encode" in a for k, a in build), (
        "the build must load the model offline, so the image holds it"
    )
    assert ("ENV", "HF_HUB_OFFLINE=1") in final or any(
        k == "ENV" and "HF_HUB_OFFLINE=1" in a for k, a in final
    )
    healthcheck = next(a for k, a in final if k == "HEALTHCHECK")
    probe = urlsplit(_probe_url({"test": [healthcheck]}))
    assert probe.path in _app_paths()
    command = shlex.split(next(a for k, a in final if k == "CMD").replace(",", " "))
    port = next(a for k, a in final if k == "EXPOSE")
    assert str(probe.port) == port == _option([c.strip('[]"') for c in command], "--port")


METRIC = re.compile(r"\b((?:astrolabe|process)_[a-z0-9_]+)\b")


@pytest.fixture(scope="module")
def exposed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[set[str]]:
    """Every sample name the app's /metrics can carry as `serve` runs it, the engine in
    processes of its own (also of metrics not yet observed), and Prometheus's own `up`."""
    data = tmp_path_factory.mktemp("metrics") / "data"
    with running_app_on_engine_processes(data, HashingEncoder()) as (client, _):
        index(client, doc("1"))
        names = {"up"}
        for family in client.app.state.astrolabe.metrics.registry.collect():  # type: ignore[attr-defined]
            suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"]}
            names |= {family.name + s for s in suffixes.get(family.type, [""])}
        yield names


def _expressions(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield value
            else:
                yield from _expressions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _expressions(item)


def test_alert_rules_read_metrics_the_service_exposes(exposed: set[str]) -> None:
    rules = _load(DEPLOY / "prometheus" / "astrolabe-rules.yml")["groups"][0]["rules"]
    assert len(rules) >= 5
    for rule in rules:
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}, rule["alert"]
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        used = set(METRIC.findall(rule["expr"])) | ({"up"} if "up{" in rule["expr"] else set())
        assert used, rule["alert"]
        assert used <= exposed, (rule["alert"], used - exposed)


def test_the_dashboard_charts_metrics_the_service_exposes(exposed: set[str]) -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "astrolabe-dashboard.json").read_text())
    expressions = list(_expressions(dashboard["panels"]))
    assert len(expressions) >= 15
    used = {name for expr in expressions for name in METRIC.findall(expr)}
    assert used <= exposed, used - exposed
    observed = {"astrolabe_search_duration_seconds_bucket", "astrolabe_ingest_queue_depth"}
    assert observed <= used
    charted = {name.removesuffix("_total").removesuffix("_bucket") for name in used}
    families = {name.removesuffix("_total").removesuffix("_bucket") for name in exposed}
    assert {n for n in families if n.startswith("astrolabe_")} - charted <= {
        "astrolabe_build_info",
        "astrolabe_http_request_duration_seconds_count",
        "astrolabe_http_request_duration_seconds_sum",
        "astrolabe_search_duration_seconds_count",
        "astrolabe_search_duration_seconds_sum",
    }, "every metric of the service is on the dashboard"
