#!/usr/bin/env python3
"""Every relative link in the README and the docs pages resolves: the file exists inside the
repository and, for `page.md#anchor`, the page has a heading with that anchor (GitHub's rule:
lower case, punctuation dropped, spaces to hyphens, `-1`, `-2` … for repeated headings).

    scripts/check-links.py [FILE.md ...]     # default: README.md and docs/*.md

Links inside code blocks, inline code and HTML comments are not links. Web links are not
fetched. Exit status 1 lists every broken link as FILE:LINE with what is missing.
"""
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ID = re.compile(r"\s*\{#([\w-]+)\}\s*$")
MAX_BYTES = 4 * 1024 * 1024  # docs pages are small; anything larger is not one


def prose_lines(text, blank_code=True):
    """(line number, line) outside fenced code blocks and HTML comments, inline code blanked
    (kept for headings, whose code text is part of their anchor)."""
    fence = None
    in_comment = False
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if in_comment:
            if "-->" not in line:
                continue
            line, in_comment = line.split("-->", 1)[1], False
        line = re.sub(r"<!--.*?-->", "", line)
        if "<!--" in line:
            line, in_comment = line.split("<!--", 1)[0], True
        yield number, re.sub(r"(`+)(?:(?!\1).)+\1", "", line) if blank_code else line


def slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays
    text = re.sub(r"<[^>]+>", "", text).lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LN":
            kept.append("-" if ch == " " else ch)
    return "".join(kept)


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line in prose_lines(read(path), blank_code=False):
            m = HEADING.match(line)
            if not m:
                continue
            title = m.group(2)
            explicit = EXPLICIT_ID.search(title)
            if explicit:
                found.add(explicit.group(1))
            base = slug(title)
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def read(path):
    if path.is_symlink() or not path.is_file():
        raise ValueError("not a regular file")
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES} bytes")
    return path.read_text(encoding="utf-8")


def check(page):
    problems = []
    rel = page.relative_to(ROOT)
    for number, line in prose_lines(read(page)):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            where, _, anchor = target.partition("#")
            dest = (page.parent / unquote(where)).resolve() if where else page
            if ROOT not in dest.parents and dest != ROOT:
                problems.append(f"{rel}:{number}: {target}: points outside the repository")
                continue
            if not dest.exists():
                problems.append(f"{rel}:{number}: {target}: {dest.relative_to(ROOT)} does not exist")
                continue
            if anchor and dest.suffix == ".md":
                try:
                    known = anchors(dest)
                except ValueError as e:
                    problems.append(f"{rel}:{number}: {target}: {e}")
                    continue
                if unquote(anchor).lower() not in known:
                    problems.append(
                        f"{rel}:{number}: {target}: no heading with anchor #{unquote(anchor)} in "
                        f"{dest.relative_to(ROOT)} (fix the link or the heading)"
                    )
    return problems


def main(args):
    pages = [Path(a).resolve() for a in args] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    problems = []
    for page in pages:
        try:
            problems += check(page)
        except (OSError, ValueError, UnicodeDecodeError) as e:
            problems.append(f"{page}: cannot read: {e}")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"links: {len(pages)} pages checked, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
