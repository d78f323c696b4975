"""A fetched page as Markdown: what a model reads best, at a fraction of the HTML's tokens.

markdownify (maintained, MIT, pure Python on BeautifulSoup with the standard library's
html.parser, so nothing to compile and nothing downloaded) does the conversion; what it
would keep as text but no reader wants — scripts, styles, SVG paths, forms — is removed
from the tree first. Links stay links, code blocks stay fenced.
"""

from __future__ import annotations

import re

# Elements whose text is never page content.
DROPPED_ELEMENTS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "form",
    "button",
    "select",
    "input",
    "textarea",
    "head",
)
_BLANK_RUNS = re.compile(r"\n{3,}")


def html_to_markdown(html: bytes | str, *, encoding: str | None = None) -> tuple[str, str]:
    """(title, Markdown body) of an HTML document. Bytes are decoded the way browsers do
    (the declared charset, else the page's meta tag, else a guess)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser", from_encoding=encoding if isinstance(html, bytes) else None)
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for element in soup.find_all(DROPPED_ELEMENTS):
        element.decompose()
    converter = MarkdownConverter(heading_style="ATX", bullets="-", code_language="", escape_misc=False)
    body = converter.convert_soup(soup)
    return title, _BLANK_RUNS.sub("\n\n", body).strip()
