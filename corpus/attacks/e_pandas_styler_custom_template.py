# warden-case: e-pandas-styler-custom-template
# group: E
# technique: Styler.from_custom_template loads a template the program wrote with a non-sandboxed FileSystemLoader
# variant: plain
# expect-static: deny
# expect-rules: REF202
# expect-jail: contained
import pandas as pd

with open("evil.tpl", "w") as fh:
    fh.write("{% extends 'html.tpl' %}{% block table %}{{ cycler.__init__.__globals__.os.popen('id').read() }}{% endblock table %}")
Styler = pd.io.formats.style.Styler
Custom = Styler.from_custom_template(".", "evil.tpl")
print(Custom(pd.DataFrame({"a": [1]})).to_html())
