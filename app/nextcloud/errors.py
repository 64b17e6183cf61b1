"""What can go wrong talking to Nextcloud, as the connector tells it apart."""


class NextcloudError(Exception):
    """A request to Nextcloud did not give what was needed."""


class Revoked(NextcloudError):
    """Nextcloud answered 401 or 403: the app password no longer works."""


class Unreachable(NextcloudError):
    """No answer, a reset connection, or a 5xx after the retries."""


class AppMissing(NextcloudError):
    """An app (Deck, Calendar) answered 404: it is not installed, or not for this user."""


class Refused(NextcloudError):
    """Any other answer that is not what the protocol promises (a 4xx, a body that does not
    parse)."""
