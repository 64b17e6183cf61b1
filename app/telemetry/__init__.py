"""What an operator watches: request ids, logs, Prometheus metrics (docs/deployment.md,
"Monitoring")."""
