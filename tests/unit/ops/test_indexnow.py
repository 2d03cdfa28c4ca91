"""IndexNow in process: the payload, what is refused before anything is sent, and the
retry waits (the pushes to an endpoint: tests/integration/ops/test_indexnow.py)."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sitemap_middleware import ConfigurationError, SitemapConfig
from sitemap_middleware._ops.indexnow import _retry_after, retry_wait
from sitemap_middleware.ops import IndexNowNotifier

KEY = "0123456789abcdef-key"


def test_payload_is_the_documented_json_body() -> None:
    """host, key, keyLocation and urlList, as indexnow.org documents them."""
    config = SitemapConfig(
        base_url="https://www.example.com", sections={"p": ["/"]}, indexnow_key=KEY
    )
    notifier = IndexNowNotifier.for_config(config)
    assert notifier.payload(["https://www.example.com/a"]) == {
        "host": "www.example.com",
        "key": KEY,
        "keyLocation": f"https://www.example.com/{KEY}.txt",
        "urlList": ["https://www.example.com/a"],
    }


def test_bad_input_is_refused_with_a_clear_error() -> None:
    """A bad key, batch size or foreign URL raises before anything is sent."""
    with pytest.raises(ConfigurationError, match="8 to 128 characters"):
        IndexNowNotifier(host="example.com", key="short")
    with pytest.raises(ConfigurationError, match="batch_size must be an integer from 1 to 10000"):
        IndexNowNotifier(host="example.com", key=KEY, batch_size=20_000)
    with pytest.raises(ConfigurationError, match="indexnow_key must be"):
        SitemapConfig(base_url="https://example.com", sections={"p": ["/"]}, indexnow_key="a b")
    with pytest.raises(ConfigurationError, match="indexnow_key is not set"):
        IndexNowNotifier.for_config(SitemapConfig(base_url="https://e.com", sections={"p": ["/"]}))
    notifier = IndexNowNotifier(host="example.com", key=KEY)
    with pytest.raises(ValueError, match="'https://evil.test/x' is not an absolute URL on host"):
        anyio.run(notifier.notify, ["https://example.com/a", "https://evil.test/x"])


def test_scheme_and_host_of_urls_compare_case_insensitively() -> None:
    """``HTTP://Example.COM/x`` is on host example.com (RFC 3986 6.2.2.1); paths keep case."""
    notifier = IndexNowNotifier(host="Example.com", key=KEY)
    assert notifier._checked(["HTTP://Example.COM/X", "https://example.com/X"]) == [
        "HTTP://Example.COM/X",
        "https://example.com/X",
    ]
    with pytest.raises(ValueError, match="is not an absolute URL on host"):
        notifier._checked(["ftp://example.com/x"])


@given(st.text())
@example("Wed, 21 Oct 2015 07:28:00 GMT")
@example("Fri, 31 Dec 9999 23:59:59 +2359")
@example("Mon, 01 Jan 0001 00:00:00 -2359")
@example("\u00b2")
@example("9" * 5000)
def test_retry_after_never_raises(value: str) -> None:
    """Any header text gives a number of seconds >= 0, or None (use the normal backoff)."""
    seconds = _retry_after(value)
    assert seconds is None or seconds >= 0


@given(
    retry_after=st.one_of(st.none(), st.text(), st.integers(0, 10**30).map(str)),
    delay=st.floats(0, 1e6),
    max_backoff=st.floats(0, 1e6),
    jitter=st.floats(0, 1),
)
def test_a_wait_never_exceeds_max_backoff(
    retry_after: str | None, delay: float, max_backoff: float, jitter: float
) -> None:
    """Jitter included, no wait is longer than max_backoff (nor negative)."""
    wait = retry_wait(delay, retry_after, max_backoff, jitter)
    assert 0 <= wait <= max_backoff


def test_retry_wait_honours_retry_after_and_jitters_below_the_cap() -> None:
    assert retry_wait(1.0, "7", 300.0, 0.0) == 7.0  # never shorter than Retry-After
    assert retry_wait(1.0, None, 300.0, 1.0) == 1.25  # up to 25 % jitter
    assert retry_wait(200.0, None, 220.0, 1.0) == 220.0  # jitter stops at the cap
    assert retry_wait(1.0, "\u00b2", 300.0, 0.0) == 1.0  # junk: the normal backoff


def test_timeouts_and_backoffs_must_be_positive() -> None:
    for name, value in [("timeout", 0), ("timeout", -1.0), ("backoff", -1), ("max_backoff", -1)]:
        with pytest.raises(ConfigurationError, match=f"{name} must be"):
            IndexNowNotifier(host="example.com", key=KEY, **{name: value})  # type: ignore[arg-type]
