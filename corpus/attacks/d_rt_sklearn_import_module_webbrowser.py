# warden-case: d-rt-sklearn-import-module-webbrowser
# group: D
# technique: sklearn.utils.discovery re-exports importlib.import_module; the program imports webbrowser through it and opens a URL
# variant: import-alias
# expect-static: deny
# expect-rules: ATTR304
# expect-runtime: IMP101
# expect-jail: contained
from sklearn.utils import discovery
browser = getattr(discovery, "import_" + "module")("webbrowser")
browser.open("http://127.0.0.1:5758/warden")
