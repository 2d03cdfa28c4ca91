"""Push on publish: a model's saves and deletes reach IndexNow in the background, batched.

A local endpoint (``http.server`` in a thread) records each POST, or answers with an
error, or hangs until released: no network, and the saving code is timed against it.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware import ConfigurationError, SitemapConfig
from sitemap_middleware.ops import IndexNowNotifier

pytestmark = pytest.mark.usefixtures("django_project")

KEY = "0123456789abcdef-push"


@dataclass
class LocalEndpoint:
    """What the endpoint answers (``status``), whether it hangs, and what it received."""

    url: str = ""
    status: int = 200
    hang: threading.Event | None = None  # set: answer; None: answer at once
    received: list[dict[str, Any]] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)

    def urls(self) -> list[list[str]]:
        return [body["urlList"] for body in self.received]


@pytest.fixture
def endpoint() -> Iterator[LocalEndpoint]:
    state = LocalEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.received.append(body)
            state.arrived.set()
            if state.hang is not None:
                state.hang.wait(120)  # released by the test (or its end)
            self.send_response(state.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/indexnow"
    try:
        yield state
    finally:
        if state.hang is not None:
            state.hang.set()
        server.shutdown()
        server.server_close()


def notifier(endpoint: LocalEndpoint, base_url: str = "https://example.com", **kwargs: Any) -> Any:
    config = SitemapConfig(base_url=base_url, sections={"p": ["/"]}, indexnow_key=KEY)
    kwargs = {"retries": 0, "backoff": 0.01, "timeout": 5.0, **kwargs}
    return IndexNowNotifier.for_config(config, endpoint=endpoint.url, **kwargs)


@pytest.fixture
def pushes() -> Iterator[list[Any]]:
    """Connections made by a test: closed afterwards, then every Tag is deleted."""
    from tests.djangoproject.shop.models import Tag

    made: list[Any] = []
    yield made
    for push in made:
        push.close(timeout=5)
    Tag.objects.all().delete()


def connect(pushes: list[Any], *args: Any, **kwargs: Any) -> Any:
    from sitemap_middleware.django import notify_on_change
    from tests.djangoproject.shop.models import Tag

    push = notify_on_change(Tag, *args, **kwargs)
    pushes.append(push)
    return push


def new_tag(code: str | None = None) -> Any:
    from tests.djangoproject.shop.models import Tag

    return Tag.objects.create(code=code)


def test_a_save_sends_its_url(endpoint: LocalEndpoint, pushes: list[Any]) -> None:
    """One line connects the model; a save's absolute URL is POSTed as IndexNow's body."""
    push = connect(pushes, notifier(endpoint), delay=0.05)
    tag = new_tag("a")
    assert push.flush(timeout=5)
    (body,) = endpoint.received
    assert body == {
        "host": "example.com",
        "key": KEY,
        "keyLocation": f"https://example.com/{KEY}.txt",
        "urlList": [f"https://example.com/tags/{tag.pk}/"],
    }
    assert push.flush(timeout=5)  # nothing more to send
    assert len(endpoint.received) == 1


def test_a_burst_of_saves_is_one_batch(endpoint: LocalEndpoint, pushes: list[Any]) -> None:
    """Saves within ``delay`` of the first are one POST (each URL once), sent unflushed."""
    connect(pushes, notifier(endpoint), delay=0.5)
    tags = [new_tag(f"t{i}") for i in range(20)]
    for tag in tags[:5]:  # saved again: still one URL each
        tag.save()
    assert endpoint.arrived.wait(5)
    time.sleep(0.3)  # no second POST follows
    assert endpoint.urls() == [[f"https://example.com/tags/{tag.pk}/" for tag in tags]]


def test_a_burst_is_split_at_the_notifiers_batch_size(
    endpoint: LocalEndpoint, pushes: list[Any]
) -> None:
    push = connect(pushes, notifier(endpoint, batch_size=8), delay=5)
    tags = [new_tag(f"t{i}") for i in range(20)]
    assert push.flush(timeout=5)
    expected = [f"https://example.com/tags/{tag.pk}/" for tag in tags]
    assert endpoint.urls() == [expected[:8], expected[8:16], expected[16:]]


def test_a_rolled_back_save_sends_nothing(endpoint: LocalEndpoint, pushes: list[Any]) -> None:
    """URLs are handed over on commit: a rolled-back transaction sends nothing."""
    from django.db import transaction

    push = connect(pushes, notifier(endpoint), delay=0.05)
    with pytest.raises(RuntimeError), transaction.atomic():
        new_tag("gone")
        raise RuntimeError("roll back")
    with transaction.atomic():
        kept = new_tag("kept")
        assert push.flush(timeout=5)
        assert endpoint.received == []  # not before the commit either
    assert push.flush(timeout=5)
    assert endpoint.urls() == [[f"https://example.com/tags/{kept.pk}/"]]


def test_a_delete_sends_the_url(endpoint: LocalEndpoint, pushes: list[Any]) -> None:
    """IndexNow wants deleted URLs too: the URL is worked out before the row goes."""
    tag = new_tag("doomed")
    push = connect(pushes, notifier(endpoint), delay=0.05)
    pk = tag.pk
    tag.delete()
    assert push.flush(timeout=5)
    assert endpoint.urls() == [[f"https://example.com/tags/{pk}/"]]


def test_the_save_never_waits_for_the_endpoint(endpoint: LocalEndpoint, pushes: list[Any]) -> None:
    """An endpoint that hangs: saves complete while it still holds the batcher's POST
    (no timing: the endpoint is released only after they have), and flush(timeout)
    says it is not done."""
    endpoint.hang = threading.Event()
    push = connect(pushes, notifier(endpoint), delay=0)
    new_tag("first")
    assert endpoint.arrived.wait(5)  # the batcher is now stuck in a POST
    for i in range(20):  # a save that waited for the network would wait for hang.set()
        new_tag(f"next-{i}")
    assert not endpoint.hang.is_set() and len(endpoint.urls()) <= 1
    assert not push.flush(timeout=0.2)
    endpoint.hang.set()
    assert push.flush(timeout=5)
    assert sum(map(len, endpoint.urls())) == 21


@pytest.mark.parametrize("status", [403, 500])
def test_an_endpoint_failure_is_logged_not_raised(
    endpoint: LocalEndpoint,
    pushes: list[Any],
    status: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    endpoint.status = status
    push = connect(pushes, notifier(endpoint), delay=0.05)
    with caplog.at_level(logging.ERROR, "sitemap_middleware"):
        new_tag("x")
        assert push.flush(timeout=5)
    assert "IndexNow: 1 URLs not submitted" in caplog.text and str(status) in caplog.text


def test_an_unreachable_endpoint_is_logged_not_raised(
    pushes: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    closed = LocalEndpoint(url="http://127.0.0.1:9/indexnow")  # discard port: refused
    push = connect(pushes, notifier(closed), delay=0.05)
    with caplog.at_level(logging.ERROR, "sitemap_middleware"):
        new_tag("x")
        assert push.flush(timeout=5)
    assert "IndexNow: 1 URLs not submitted" in caplog.text


def test_location_template_function_and_base_path(
    endpoint: LocalEndpoint, pushes: list[Any]
) -> None:
    """A template of field names is encoded as the sitemap's templates are; a function
    returning None skips the object; paths join the base directory, as in the sitemap."""
    base = "https://example.com/shop/"
    a = connect(pushes, notifier(endpoint, base), location="/tags/{code}/", delay=0.05)
    b = connect(
        pushes,
        notifier(endpoint, base),
        location=lambda tag: f"/t/{tag.pk}" if tag.code != "skip" else None,
        delay=0.05,
    )
    tag = new_tag("a b/é")
    new_tag("skip")
    assert a.flush(timeout=5) and b.flush(timeout=5)
    assert sorted(url for urls in endpoint.urls() for url in urls) == [
        f"https://example.com/shop/t/{tag.pk}",
        "https://example.com/shop/tags/a%20b/%C3%A9/",
        "https://example.com/shop/tags/skip/",
    ]


def test_a_bad_location_is_logged_and_the_save_goes_on(
    endpoint: LocalEndpoint, pushes: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    """A NULL in the template, a raising function, a URL on another host: logged, skipped."""
    from tests.djangoproject.shop.models import Tag

    def boom(tag: Any) -> str:
        raise KeyError("no url")

    a = connect(pushes, notifier(endpoint), location="/tags/{code}/", delay=0.05)
    b = connect(pushes, notifier(endpoint), location=boom, delay=0.05)
    c = connect(pushes, notifier(endpoint), location=lambda t: "https://other.org/x", delay=0.05)
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        new_tag(None)
    assert Tag.objects.count() == 1
    assert a.flush(timeout=5) and b.flush(timeout=5) and c.flush(timeout=5)
    assert endpoint.received == []
    assert "'code' is NULL" in caplog.text
    assert "KeyError" in caplog.text
    assert "https://other.org/x" in caplog.text


def test_a_full_queue_drops_and_logs(
    endpoint: LocalEndpoint, pushes: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    push = connect(pushes, notifier(endpoint), delay=30, max_pending=3)
    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        tags = [new_tag(f"t{i}") for i in range(5)]
    assert push.dropped == 2
    assert caplog.text.count("queue is full") == 1  # once per episode, not per URL
    assert push.flush(timeout=5)
    assert endpoint.urls() == [[f"https://example.com/tags/{tag.pk}/" for tag in tags[:3]]]


def test_disconnect_stops_listening(endpoint: LocalEndpoint, pushes: list[Any]) -> None:
    push = connect(pushes, notifier(endpoint), delay=0.05)
    push.disconnect()
    new_tag("after")
    assert push.flush(timeout=5)
    assert endpoint.received == []
    assert push.close(timeout=5)


def test_close_sends_what_is_pending_and_stops(endpoint: LocalEndpoint, pushes: list[Any]) -> None:
    push = connect(pushes, notifier(endpoint), delay=30)
    tag = new_tag("last")
    assert push.close(timeout=5)
    assert endpoint.urls() == [[f"https://example.com/tags/{tag.pk}/"]]
    new_tag("ignored")
    assert push.flush(timeout=1)
    assert len(endpoint.received) == 1


EXITING = """
import os, sys, django
os.environ["DJANGO_SETTINGS_MODULE"] = "tests.djangoproject.settings"
django.setup()
from tests.djangoproject.data import seed
seed()
from sitemap_middleware import SitemapConfig
from sitemap_middleware.ops import IndexNowNotifier
from sitemap_middleware.django import notify_on_change
from tests.djangoproject.shop.models import Tag
config = SitemapConfig(base_url="https://example.com", sections={"p": ["/"]}, indexnow_key=sys.argv[2])
notify_on_change(Tag, IndexNowNotifier.for_config(config, endpoint=sys.argv[1]))
Tag.objects.create(code="exit")
"""


def test_a_process_that_exits_sends_what_is_pending(
    endpoint: LocalEndpoint, tmp_path: Path
) -> None:
    """A script saves and ends within the delay: the URL still goes, before the
    interpreter stops the thread pools that resolve the endpoint's host name."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "SITEMAP_DJANGO_DB": str(tmp_path / "db")}
    env.pop("SITEMAP_TEST_POSTGRES_URL", None)
    url = endpoint.url.replace("127.0.0.1", "localhost")  # a name to resolve at exit
    done = subprocess.run(
        [sys.executable, "-c", EXITING, url, KEY],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "not sent" not in done.stderr, done.stderr
    assert endpoint.urls() == [["https://example.com/tags/1/"]]


def test_bad_arguments_fail_at_connect(endpoint: LocalEndpoint) -> None:
    from sitemap_middleware.django import notify_on_change
    from tests.djangoproject.shop.models import Tag

    good = notifier(endpoint)
    with pytest.raises(ConfigurationError, match="Django model class"):
        notify_on_change(Tag(), good)
    with pytest.raises(ConfigurationError, match="IndexNowNotifier"):
        notify_on_change(Tag, "https://api.indexnow.org")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="nope"):
        notify_on_change(Tag, good, location="/tags/{nope}/")
    with pytest.raises(ConfigurationError, match="names no field"):
        notify_on_change(Tag, good, location="/tags/")
    with pytest.raises(ConfigurationError, match="not on the notifier's host"):
        notify_on_change(Tag, good, base_url="https://other.org")
    with pytest.raises(ConfigurationError, match="delay"):
        notify_on_change(Tag, good, delay=-1)
    with pytest.raises(ConfigurationError, match="max_pending"):
        notify_on_change(Tag, good, max_pending=0)


def test_a_thread_that_cannot_start_never_raises_into_the_commit(
    endpoint: LocalEndpoint,
    pushes: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Hostile review: the commit hook ran outside the receiver's try, so a batcher thread
    that could not start (at interpreter shutdown, out of threads) raised out of
    ``atomic()`` after the commit, and the batcher was left with a thread never started:
    nothing was ever sent again and ``close()`` raised."""
    from django.db import transaction

    push = connect(pushes, notifier(endpoint), delay=0.05)

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as patch, caplog.at_level(logging.WARNING, "sitemap_middleware"):
        patch.setattr(threading.Thread, "start", refuse)
        with transaction.atomic():
            new_tag("lost")
    assert "can't start new thread" in caplog.text
    assert push.dropped == 1
    later = new_tag("later")  # the thread starts now
    assert push.flush(timeout=5)
    assert endpoint.urls() == [[f"https://example.com/tags/{later.pk}/"]]
    assert push.close(timeout=5)
