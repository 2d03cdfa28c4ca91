"""The protocol's size limits: this module alone owns them (sitemaps.org 0.9, Google).

Everything that caps a file, a URL or a value imports its number from here.
"""

from __future__ import annotations

__all__ = [
    "MAX_BYTES",
    "MAX_IMAGES_PER_URL",
    "MAX_INDEX_ENTRIES",
    "MAX_NEWS_PER_FILE",
    "MAX_NEWS_PUBLICATION_NAME",
    "MAX_NEWS_TITLE",
    "MAX_URLS",
    "MAX_URL_LENGTH",
    "MAX_VIDEO_DESCRIPTION",
    "MAX_VIDEO_DURATION",
    "MAX_VIDEO_TAGS",
    "MAX_VIDEO_TAG_LENGTH",
    "MAX_VIDEO_TITLE",
    "MAX_VIDEO_UPLOADER",
    "ROBOTS_MAX_BYTES",
]

#: URLs in one <urlset> (sitemaps.org).
MAX_URLS = 50_000
#: Uncompressed bytes of one sitemap or index file (sitemaps.org: 50 MiB).
MAX_BYTES = 52_428_800
#: <sitemap> children of one <sitemapindex> (sitemaps.org).
MAX_INDEX_ENTRIES = 50_000
#: <news:news> entries in one sitemap (Google News).
MAX_NEWS_PER_FILE = 1_000
#: <image:image> entries of one <url> (Google).
MAX_IMAGES_PER_URL = 1_000
#: sitemaps.org: a <loc> "must be less than 2,048 characters".
MAX_URL_LENGTH = 2_048
#: RFC 9309 2.5: crawlers parse at least 500 KiB of robots.txt (Google: exactly that).
ROBOTS_MAX_BYTES = 500 * 1024

# Google's video extension: characters of a title, a description and an uploader's
# name, seconds of a duration (1 to 8 hours), tags of one video.
MAX_VIDEO_TITLE = 100
MAX_VIDEO_DESCRIPTION = 2_048
MAX_VIDEO_UPLOADER = 255
MAX_VIDEO_DURATION = 28_800
MAX_VIDEO_TAGS = 32
#: Characters of one video tag (Google states none: a bound of ours).
MAX_VIDEO_TAG_LENGTH = 256
#: Characters of a news article's title and its publication's name (Google states
#: none: bounds of ours, far above any real one).
MAX_NEWS_TITLE = 2_048
MAX_NEWS_PUBLICATION_NAME = 256
