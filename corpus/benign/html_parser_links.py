# warden-case: html-parser-links
# group: BENIGN
# technique: html.parser.HTMLParser subclass collecting links
# expect-static: allow
# expect-output: OK: 2 links, 1 heading
from html.parser import HTMLParser


class LinkCollector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.headings = 0

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs).get("href"))
        elif tag == "h1":
            self.headings += 1


page = '<h1>Report</h1><p>See <a href="a.html">A</a> and <a href="b.html">B</a>.</p>'
parser = LinkCollector()
parser.feed(page)
print(parser.links)
print(f"OK: {len(parser.links)} links, {parser.headings} heading")
