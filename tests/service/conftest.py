"""The Service fixtures of tests/service (service_kit.py): a Service per backend, the turnstile."""

from service_kit import database_url, service, turnstile

__all__ = ["database_url", "service", "turnstile"]
