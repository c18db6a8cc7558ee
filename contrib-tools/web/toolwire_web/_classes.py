"""What the class and id names of an element say about it: article body, furniture, comments."""

from __future__ import annotations

import functools
import re

__all__ = [
    "BODY",
    "DISCUSSION",
    "FURNITURE",
    "NEGATIVE",
    "POSITIVE",
    "classify_names",
    "sort_names",
]

#: Page furniture (navigation, sharing, ads, related links, comments...): removed from the page.
FURNITURE = 1
#: Names of article-body containers ("article-body", "entry-content", ...).
BODY = 2
#: Names that lower the odds of holding the article, and mark parts left out of it (bylines,
#: captions, metadata).
NEGATIVE = 4
#: Names that raise the odds of holding the article ("article", "content", "post", ...).
POSITIVE = 8
#: Comment sections and other discussion below an article.
DISCUSSION = 16

# Short words that would match inside others are anchored with a lookahead, and a lookbehind
# placed after their first letter: every alternative then starts with a literal character, which
# the regex engine scans for much faster than it tries an assertion at each position.
_BODY_NAMES = re.compile(
    r"article(?:-?body|__body|-?content|__content|-?text|-?main|-?detail)"
    r"|story(?:-?body|__body|-?content|-?text)"
    r"|post(?:-?body|-?content|__content|-?text)"
    r"|entry(?:-?content|-?body|-?text)"
    r"|news(?:-?body|-?content|-?text)"
    r"|content-?body|body-?text|body-?copy|main-?content|text-?content|rich-?text|the-?content"
    r"|detail-?content|field-?body|node-?content"
)
_FURNITURE_NAMES = re.compile(
    r"comment|disqus|sidebar|side-bar|related|recommend|share|sharing|social|newsletter"
    r"|rollover|tooltip|popover|hovercard|nocontent|noindex|subscri|signup|sign-up|cookie"
    r"|consent|gdpr|breadcrumb|pagination|pager|masthead|navbar|navigation"
    r"|nav(?<![a-z]nav)(?![a-z])|menu|footer|promo|advert|ad(?<![a-z]ad)s?(?![a-z])|sponsor"
    r"|popup|modal|banner|widget|toolbar|trending|popular|outbrain|taboola|read-?more"
    r"|more-?stories|author-?bio|skip-?link|jump-?link|tags(?<![a-z]tags)(?![a-z])|tag-?list"
    r"|tag-?cloud|post-?tags|next(?<![a-z]next)(?![a-z])|prev(?<![a-z]prev)(?:ious)?(?![a-z])"
)
_NEGATIVE_NAMES = re.compile(
    r"comment|meta|foot|sidebar|related|share|social|sponsor|promo|widget|hidden|byline"
    r"|author|caption|credit|date|tags(?<![a-z]tags)(?![a-z])|rollover|tooltip|popover"
    r"|hovercard"
)
_POSITIVE_NAMES = re.compile(r"article|body|content|entry|main|post|story|text|blog")
_DISCUSSION_NAMES = re.compile(r"comment|disqus|respond|replies|discussion")
# Posts embedded from social networks are part of an article's text, whatever else the names
# say ("social-media-embed", "article-tweet").
_EMBED_NAMES = re.compile(r"tweet(?!-?button)|instagram-media|social(?:-media)?-embed")


@functools.lru_cache(maxsize=8192)
def classify_names(names: str) -> int:
    """Flags for an element's class and id names, given as one string: all of them."""
    names = names.lower()
    flags = sort_names(names)
    if not _EMBED_NAMES.search(names) and _NEGATIVE_NAMES.search(names):
        flags |= NEGATIVE
    if _POSITIVE_NAMES.search(names):
        flags |= POSITIVE
    if _DISCUSSION_NAMES.search(names):
        flags |= DISCUSSION
    return flags


@functools.lru_cache(maxsize=8192)
def sort_names(names: str) -> int:
    """Only the ``BODY`` and ``FURNITURE`` flags of :func:`classify_names`, found faster."""
    names = names.lower()
    if _BODY_NAMES.search(names):
        return BODY | POSITIVE
    if _FURNITURE_NAMES.search(names) and not _EMBED_NAMES.search(names):
        return FURNITURE
    return 0
